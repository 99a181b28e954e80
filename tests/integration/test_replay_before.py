"""bench-replay AFTER --before BEFORE: two runs of one job (DDP with its default buckets,
then with 1 MiB buckets) compared per profiler step and per class of call. Every figure is
held to what bench-replay reports of each run read alone."""
import json
import os
import unittest

from replay_test_support import TRACES, FolderCase, run

BEFORE = os.path.join(TRACES, "llama-ddp")
AFTER = os.path.join(TRACES, "llama-ddp-bucket1mb")


def key(c):
    return (c["op"], c["dtype"], c["bytes"], c["group_ranks"])


class Before(FolderCase):
    PREFIX = "commbench-replay-before-"

    def read(self, name, *args):
        path = os.path.join(self.dir, name)
        code, out, err = run(*args, "--json", path, "--force")
        self.assertEqual(code, 0, err)
        with open(path) as f:
            return out, json.load(f)

    def test_the_change_per_step_and_per_class_is_each_runs_own_figures(self):
        _, before = self.read("before.json", BEFORE)
        _, after = self.read("after.json", AFTER)
        out, both = self.read("both.json", AFTER, "--before", BEFORE)
        comparison = both["before"]
        self.assertEqual(comparison["source"], BEFORE)
        for side, doc in (("before", before), ("after", after)):
            steps = doc["steps"]
            figures = comparison[side]
            self.assertEqual(figures["steps"], len(steps))
            self.assertAlmostEqual(figures["step_seconds"], sum(s["step_seconds"] for s in steps) / len(steps))
            self.assertAlmostEqual(figures["calls"], sum(s["calls"] for s in steps) / len(steps))
            self.assertAlmostEqual(figures["communication_seconds"],
                                   sum(s["communication_seconds"] for s in steps) / len(steps))
            exposed = sum(r["exposed_seconds"] for r in doc["ranks"]) / len(doc["ranks"]) / len(steps)
            self.assertAlmostEqual(figures["exposed_seconds"], exposed)
        classes = {key(c): c for c in comparison["classes"]}
        for side, doc in (("before", before), ("after", after)):
            steps = len(doc["steps"])
            for c in doc["collectives"]:
                self.assertAlmostEqual(classes[key(c)][f"calls_{side}"], c["calls"] / steps)
                self.assertEqual(classes[key(c)][f"seconds_{side}"], c["seconds"])
        # A class only one run has is none on the other side.
        only_after = set(map(key, after["collectives"])) - set(map(key, before["collectives"]))
        self.assertTrue(only_after, "1 MiB buckets make allreduces of other sizes")
        for k in only_after:
            self.assertIsNone(classes[k]["calls_before"])
        self.assertIn("# against the earlier run (", out)
        self.assertEqual(both["collectives"], after["collectives"])  # the run given is still the report

    def test_an_earlier_run_that_cannot_be_read_is_one_line_exit_2_and_no_file(self):
        path = os.path.join(self.dir, "bad.json")
        for earlier, message in ((os.path.join(self.dir, "missing"), "--before: "),
                                 (os.path.join(TRACES, "README.md"), "--before: ")):
            with self.subTest(earlier=earlier):
                code, out, err = run(AFTER, "--before", earlier, "--json", path)
                self.assertEqual(code, 2, err)
                lines = err.strip().splitlines()
                self.assertEqual(len(lines), 1, err)
                self.assertTrue(lines[0].startswith("bench-replay: error: " + message), err)
                self.assertFalse(os.path.exists(path))


if __name__ == "__main__":
    unittest.main()
