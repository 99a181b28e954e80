"""bench-replay on DeepSpeed's own comms log of the zero3 fixture's profiled step (rank 0's
log_summary() tables and verbose lines, tests/fixtures/traces/zero3), held against the raw
text, read here independently, and against the same step's torch.profiler traces.
"""
import json
import os
import unittest

from replay_test_support import TRACES, FolderCase, load, rank_files, raw_counts, replay_traces_json, run


# DeepSpeed's log names in nccl-tests' terms, as this test reads them; an all-gather
# logs one rank's share.
DS_OPS = {"all_gather_into_tensor": ("allgather", 4), "reduce_scatter_tensor": ("reducescatter", 1),
          "all_reduce": ("allreduce", 1)}


DS_UNITS = {"B": 1, "KB": 1024, "MB": 1024 ** 2, "GB": 1024 ** 3}


def raw_deepspeed_summary(path):
    """(op, bytes) -> calls from the first table of a log_summary() printout."""
    calls, op = {}, None
    with open(path) as f:
        lines = f.read().splitlines()
    for line in lines[1:]:
        if line.startswith("_"):
            break  # the straggler table
        if not line.startswith(" "):
            op = line.strip()
            continue
        fields = line.split()
        if op == "log_summary_barrier":
            continue
        name, factor = DS_OPS[op]
        size = round(float(fields[0]) * DS_UNITS[fields[1]]) * factor
        calls[(name, size)] = calls.get((name, size), 0) + int(fields[2])
    return calls


class DeepSpeedLog(FolderCase):
    """DeepSpeed's own comms log of the zero3 fixture's profiled step (rank 0's
    log_summary() tables and verbose lines), held against the raw text and against the
    same step's torch.profiler traces."""

    PREFIX = "commbench-replay-ds-"

    def replay(self, name):
        json_path = os.path.join(self.dir, name + ".json")
        code, out, err = run(os.path.join(TRACES, "zero3", name), "--ranks", 4, "--json", json_path, "--force")
        self.assertEqual(code, 0, err)
        with open(json_path) as f:
            return out, json.load(f)

    def classes(self, doc):
        return {(c["op"], c["bytes"]): c["calls"] for c in doc["collectives"]}

    def test_calls_and_sizes_are_the_logs(self):
        raw = raw_deepspeed_summary(os.path.join(TRACES, "zero3", "comms-summary.txt"))
        for name in ("comms-summary.txt", "comms-summary-straggler.txt", "comms-verbose.log"):
            with self.subTest(log=name):
                out, doc = self.replay(name)
                self.assertEqual(self.classes(doc), raw)
                self.assertEqual(doc["world_size"], 4)
                self.assertEqual(doc["provenance"]["settings"]["format"], "deepspeed comms log")
                self.assertRegex(out.splitlines()[0], r"^# bench-replay: DeepSpeed comms log .*, 4 ranks, \d+ calls$")
                self.assertIn("every call is taken as over the 4 ranks of --ranks", out)
        code, out, err = run(os.path.join(TRACES, "zero3", "comms-summary.txt"), "--ranks", 1)
        self.assertEqual(code, 0, err)
        self.assertRegex(out.splitlines()[0], r", 1 rank, \d+ calls$")

    def test_the_log_and_the_traces_of_the_step_agree(self):
        _, doc = self.replay("comms-summary.txt")
        trace = raw_counts(load(rank_files("zero3")[0]))
        trace.pop("barrier", None)
        logged = {}
        for c in doc["collectives"]:
            logged[c["op"]] = logged.get(c["op"], 0) + c["calls"]
        self.assertEqual(logged, trace)
        # DeepSpeed rounds sizes to two decimals of its unit: within 0.5 % of the bytes.
        traced = self.classes(replay_traces_json(self.dir, "zero3"))
        for (op, size), calls in self.classes(doc).items():
            near = [s for (o, s) in traced if o == op and abs(s - size) <= 0.005 * size]
            self.assertEqual(len(near), 1, (op, size))
            self.assertEqual(traced[(op, near[0])], calls)

    def test_running_totals_and_straggler_figures_are_said(self):
        out, doc = self.replay("comms-verbose.log")
        self.assertIn("running total of its operation's calls", out)
        gathers = sorted((c for c in doc["collectives"] if c["op"] == "allgather"), key=lambda c: c["bytes"])
        # The 8 bias gathers' own times are their launches, far below the weights' gather.
        self.assertLess(gathers[0]["seconds"], gathers[1]["seconds"] / 10)
        out, doc = self.replay("comms-summary-straggler.txt")
        self.assertIn("the straggler figures are left out", out)
        self.assertTrue(any(c["wait_seconds"] > 0 for c in doc["collectives"]))
        out, _ = self.replay("comms-summary.txt")
        self.assertIn("has inflated times in log_summary()", out)


if __name__ == "__main__":
    unittest.main()
