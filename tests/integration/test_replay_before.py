"""bench-replay AFTER --before BEFORE: two runs of one job (DDP with its default buckets,
then with 1 MiB buckets) compared per profiler step and per class of call. Every figure is
held to what bench-replay reports of each run read alone."""
import gzip
import json
import os
import unittest

from replay_test_support import TRACES, FolderCase, run

HERE = os.path.dirname(os.path.abspath(__file__))

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
        # Each class is a row of its own that reads apart from the others: two sizes that
        # would round alike are printed in bytes.
        ops = {c["op"] for c in comparison["classes"]}
        shown = out.split("# against the earlier run (", 1)[1].splitlines()
        rows = [tuple(line.split()[:4]) for line in shown if line.split() and line.split()[0] in ops]
        self.assertEqual(len(rows), len(comparison["classes"]), out)
        self.assertEqual(len(set(rows)), len(rows), out)
        self.assertEqual(both["collectives"], after["collectives"])  # the run given is still the report

    def test_sizes_that_would_print_alike_are_printed_in_bytes(self):
        # The closed-loop proof's DDP job (results/closed-loop/README.md), traced with 25 MiB
        # and with 0.05 MiB buckets: the small buckets make allreduces of 2885632 and
        # 2883584 bytes, both 2.8MiB to one decimal, and of 1 MiB and a little over.
        results = os.path.join(HERE, "..", "..", "results", "closed-loop")
        before = os.path.join(results, "ddp-500mbit-pruned", "trace-start")
        after = os.path.join(results, "pruned-500mbit", "ddp-tiny-trace")
        if not (os.path.isdir(before) and os.path.isdir(after)):
            self.skipTest(f"the closed-loop traces are not in {results}")
        out, both = self.read("both.json", after, "--before", before)
        sizes = {c["bytes"] for c in both["before"]["classes"]}
        self.assertLessEqual({2885632, 2883584, 1048576}, sizes)
        shown = out.split("# against the earlier run (", 1)[1]
        for exact in ("2885632B", "2883584B", "1048576B"):
            self.assertIn(f" {exact} ", shown)
        self.assertNotIn(" 2.8MiB ", shown)
        self.assertIn(" 31.2MiB ", shown)  # a size no other reads like keeps its short form

    def test_a_rank_whose_trace_lost_a_step_has_its_time_taken_per_its_own_steps(self):
        # The real 3-step FSDP2 traces, with rank 1's profiler stopped before its last step:
        # its trace keeps what began before ProfilerStep#3.
        full = os.path.join(TRACES, "llama-fsdp2-3steps")
        cut = os.path.join(self.dir, "cut")
        os.makedirs(cut)
        for rank in range(4):
            with gzip.open(os.path.join(full, f"rank{rank}.json.gz"), "rt") as f:
                trace = json.load(f)
            if rank == 1:
                last = max(e["ts"] for e in trace["traceEvents"] if e.get("name", "").startswith("ProfilerStep#"))
                trace["traceEvents"] = [e for e in trace["traceEvents"] if e.get("ts", 0) < last]
            with open(os.path.join(cut, f"rank{rank}.json"), "w") as f:
                json.dump(trace, f)
        _, both = self.read("both.json", cut, "--before", full)
        ranks = {r["rank"]: r for r in both["ranks"]}
        self.assertEqual([ranks[r]["steps"] for r in range(4)], [3, 2, 3, 3])
        expected = sum(r["exposed_seconds"] / r["steps"] for r in both["ranks"]) / 4
        after = both["before"]["after"]
        self.assertEqual(after["steps"], 3)
        self.assertAlmostEqual(after["exposed_seconds"], expected)
        # Each rank's time over all three steps would read rank 1's a third low.
        self.assertGreater(after["exposed_seconds"],
                           sum(r["exposed_seconds"] for r in both["ranks"]) / 4 / 3 * 1.01)

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
