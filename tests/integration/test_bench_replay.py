"""bench-replay on real torch.profiler traces (tests/fixtures/traces: 4 gloo ranks on CPU,
recorded by record-traces.sh from real PyTorch DDP, FSDP2 and DeepSpeed ZeRO-3 jobs).

What the command reports is checked against the raw traces, read here independently: the
calls per operation come from the `c10d::` operators, the bytes from gloo's own ranges
(the backend's view of what it moved), the straggler from the run where rank 2 slept
50 ms before its backward. DeepSpeed's comms log, the fabric figures and bad input have
their own modules (test_replay_deepspeed_log, test_replay_fabric, test_replay_bad_input).
"""
import csv
import gzip
import json
import os
import shutil
import tempfile
import unittest

from replay_test_support import (C10D_OPS, HERE, TRACES, CASES, load, rank_files, merged, ranks_of, raw_counts,
                                 raw_gloo_bytes, run)

SCHEMA_PATH = os.path.join(HERE, "..", "..", "docs", "schema", "records.schema.json")


class Fixtures(unittest.TestCase):
    def test_every_case_has_every_rank_of_one_job(self):
        for case in CASES:
            with self.subTest(case=case):
                files = rank_files(case)
                self.assertEqual(len(files), ranks_of(case))
                ranks = sorted(load(f)["distributedInfo"]["rank"] for f in files)
                self.assertEqual(ranks, list(range(ranks_of(case))))


class Reading(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="commbench-replay-")
        with open(SCHEMA_PATH) as f:
            cls.schema = json.load(f)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    replays = {}  # case: what replay() gave, so that the tests read each case once
    raw_traces = {}  # case: its ranks' raw JSON

    def raw(self, case):
        if case not in self.raw_traces:
            self.raw_traces[case] = [load(path) for path in rank_files(case)]
        return self.raw_traces[case]

    def replay(self, case):
        if case not in self.replays:
            self.replays[case] = self.run_replay(case)
        return self.replays[case]

    def run_replay(self, case):
        csv_path, json_path = os.path.join(self.dir, case + ".csv"), os.path.join(self.dir, case + ".json")
        code, out, err = run(os.path.join(TRACES, case), "--csv", csv_path, "--json", json_path, "--force")
        self.assertEqual(code, 0, err)
        self.assertEqual(err, "")
        with open(json_path) as f:
            doc = json.load(f)
        with open(csv_path, newline="") as f:
            rows = list(csv.DictReader(f))
        return out, doc, rows

    def test_calls_and_bytes_per_operation_are_the_traces(self):
        for case in CASES:
            with self.subTest(case=case):
                _, doc, _ = self.replay(case)
                raw = self.raw(case)
                counts = raw_counts(raw[0])
                for other in raw[1:]:
                    self.assertEqual(raw_counts(other), counts)
                calls = {}
                for c in doc["collectives"]:
                    calls[c["op"]] = calls.get(c["op"], 0) + c["calls"]
                    self.assertEqual(c["ranks"], ranks_of(case))
                    self.assertEqual(c["group_ranks"], ranks_of(case))
                self.assertEqual(calls, counts)
                self.assertEqual(doc["calls_per_rank"], sum(counts.values()))
                moved = raw_gloo_bytes(raw[0])
                by_op = {}
                for c in doc["collectives"]:
                    by_op[c["op"]] = by_op.get(c["op"], 0) + c["bytes"] * c["calls"]
                # gloo runs a reduce-scatter as an allreduce of the whole input.
                self.assertEqual(by_op.get("allreduce", 0) + by_op.get("reducescatter", 0),
                                 moved.get("gloo:all_reduce", 0))
                self.assertEqual(by_op.get("allgather", 0), moved.get("gloo:all_gather", 0))

    def test_each_profiler_step_holds_its_own_calls(self):
        """llama-fsdp2-3steps profiled three steps: each one's calls and bytes, counted from
        rank 0's raw JSON by the ProfilerStep windows, are the JSON's steps and the console's."""
        out, doc, _ = self.replay("llama-fsdp2-3steps")
        raw = load(rank_files("llama-fsdp2-3steps")[0])["traceEvents"]
        windows = sorted((e for e in raw if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#")),
                         key=lambda e: e["ts"])
        expected = []
        for window in windows:
            inside = [e for e in raw if e.get("ph") == "X" and window["ts"] <= e["ts"] <= window["ts"] + window["dur"]]
            calls = [e for e in inside if e.get("cat") == "cpu_op" and e.get("name") in C10D_OPS]
            # gloo's ranges: an all-gather's holds one rank's part (times the 4 ranks); a
            # reduce-scatter runs as an all-reduce of its whole input, nccl-tests' size.
            moved = sum(e["args"]["Input Dims"][0][0] * 4 * (4 if e["name"] == "gloo:all_gather" else 1)
                        for e in inside if e.get("name") in ("gloo:all_gather", "gloo:all_reduce"))
            expected.append((int(window["name"].split("#")[1]), len(calls), moved))
        self.assertEqual(len(expected), 3)
        self.assertEqual([(s["step"], s["calls"]) for s in doc["steps"]], [(n, c) for n, c, _ in expected])
        self.assertEqual(sum(s["calls"] for s in doc["steps"]), doc["calls_per_rank"])
        for step, (_, _, moved) in zip(doc["steps"], expected):
            self.assertEqual(step["bytes"], moved)
            self.assertGreater(step["step_seconds"], step["communication_seconds"])
        table = out[out.index("   step    step ms"):].splitlines()[1:4]
        self.assertEqual([int(line.split()[0]) for line in table], [n for n, _, _ in expected])

    def test_communication_is_the_time_gloo_ran_counted_once_and_within_the_step(self):
        # ZeRO-3's gloo ranges overlap on gloo's threads: summed, rank 3 of llama-zero3-small
        # read 817 ms of communication in a 707 ms step. Each rank's comm ms is the union of
        # its gloo ranges, computed here from the raw JSON, and each step's lies within it.
        for case in ("llama-zero3-small", "llama-fsdp2-3steps"):
            _, doc, _ = self.replay(case)
            for trace in self.raw(case):
                spans = sorted((e["ts"], e["ts"] + e["dur"]) for e in trace["traceEvents"]
                               if e.get("ph") == "X" and e.get("name", "").startswith("gloo:"))
                union, end = 0.0, float("-inf")
                for start, stop in spans:
                    union += max(0.0, stop - max(start, end))
                    end = max(end, stop)
                rank = next(r for r in doc["ranks"] if r["rank"] == trace["distributedInfo"]["rank"])
                with self.subTest(case=case, rank=rank["rank"]):
                    self.assertAlmostEqual(rank["communication_seconds"], union * 1e-6, places=6)
                    self.assertLessEqual(rank["exposed_seconds"], rank["communication_seconds"] + 1e-9)
            for step in doc["steps"]:
                self.assertLessEqual(step["communication_seconds"], step["step_seconds"] + 1e-9)

    def test_exposed_time_is_gloos_time_the_calling_thread_ran_no_operator(self):
        """A CPU trace's exposed communication, computed here from the raw JSON: the time
        any gloo range ran (overlapping ranges once) less the time the thread that called
        the c10d operators ran an aten:: operator in it."""
        for case in CASES:
            with self.subTest(case=case):
                out, doc, rows = self.replay(case)
                for raw, record in zip(self.raw(case), doc["ranks"]):
                    self.assertAlmostEqual(record["exposed_seconds"], raw_cpu_exposed_us(raw) * 1e-6, places=9)
                    self.assertLessEqual(record["exposed_seconds"], record["communication_seconds"] * 1.000001)
                self.assertIn("exposed ms", out)
                self.assertIn("exposed ms of a CPU job: the time the backend's ranges (gloo:*) ran", out)
                ranks = [r for r in rows if r["record"] == "rank"]
                for row, record in zip(ranks, doc["ranks"]):  # the CSV holds 9 significant digits
                    self.assertAlmostEqual(float(row["exposed_seconds"]), record["exposed_seconds"],
                                           delta=1e-8 * record["exposed_seconds"])

    def test_the_records_fit_the_schema_and_the_csv_holds_them(self):
        import jsonschema
        _, doc, rows = self.replay("fsdp2")
        for kind in ("collective", "rank"):
            definition = {**self.schema["$defs"][kind], "$schema": self.schema["$schema"]}
            records = doc[self.schema["$defs"][kind]["x-document-key"]]
            for record in records:
                jsonschema.validate(record, definition)
            self.assertEqual(len([r for r in rows if r["record"] == kind]), len(records))
        self.assertEqual(doc["schema"], "commbench.replay/3")
        self.assertTrue(doc["complete"])
        self.assertEqual(doc["world_size"], 4)
        self.assertEqual(doc["backend"], "gloo")
        self.assertEqual([r["rank"] for r in doc["ranks"]], [0, 1, 2, 3])
        for record in doc["collectives"]:
            self.assertGreater(record["seconds"], 0)
            self.assertAlmostEqual(record["algbw_gbps"], record["bytes"] / record["seconds"] / 1e9, places=9)
            self.assertAlmostEqual(record["busbw_gbps"] / record["algbw_gbps"], 0.75, places=9)  # (n-1)/n of 4

    def test_a_folders_other_json_is_passed_over_with_a_note(self):
        out, doc, _ = self.replay("zero3")
        self.assertIn("zero3/ds_config.json passed over: not a Chrome trace", out)
        self.assertEqual(len(doc["traces"]), 4)
        self.assertTrue(any("ds_config.json passed over" in n for n in doc["provenance"]["notes"]))

    def test_the_rank_that_slept_is_named(self):
        out, doc, _ = self.replay("straggler")
        self.assertEqual(doc["straggler"], 2)
        self.assertIn("straggler: rank 2", out)
        late = {r["rank"]: r for r in doc["ranks"]}[2]
        self.assertEqual(late["last_arrivals"], doc["calls_per_rank"])
        # It slept 50 ms before its backward; the others waited most of that for it.
        self.assertGreater(late["lateness_seconds"], 0.025)
        self.assertLess(late["lateness_seconds"], 0.075)
        _, healthy, _ = self.replay("ddp-default")
        self.assertIsNone(healthy["straggler"])

    def test_without_the_backends_ranges_calls_are_counted_not_timed(self):
        """A trace of the operators alone (as of an NCCL job profiled without CUDA activity):
        a call's own range is its queueing, so no call has a time or a bandwidth, and who
        came last is read from when each rank called. (gloo's ranges also size a CPU job's
        calls: c10d's own operator records a TensorList, no element type.)"""
        folder = os.path.join(self.dir, "operators-only")
        os.makedirs(folder, exist_ok=True)
        for path in rank_files("straggler"):
            doc = load(path)
            doc["traceEvents"] = [e for e in doc["traceEvents"] if not e.get("name", "").startswith("gloo:")]
            with gzip.open(os.path.join(folder, os.path.basename(path)), "wt") as f:
                json.dump(doc, f)
        json_path, csv_path = (os.path.join(self.dir, "operators-only." + kind) for kind in ("json", "csv"))
        code, out, err = run(folder, "--json", json_path, "--csv", csv_path, "--force")
        self.assertEqual(code, 0, err)
        with open(json_path) as f:
            stripped = json.load(f)
        _, whole, _ = self.replay("straggler")
        def calls_per_op(doc):
            calls = {}
            for c in doc["collectives"]:
                calls[c["op"]] = calls.get(c["op"], 0) + c["calls"]
            return calls
        self.assertEqual(calls_per_op(stripped), calls_per_op(whole))
        for c in stripped["collectives"]:
            self.assertIsNone(c["seconds"], c)
            self.assertIsNone(c["algbw_gbps"], c)
            self.assertIsNone(c["busbw_gbps"], c)
        for r in stripped["ranks"]:
            self.assertIsNone(r["communication_seconds"], r)
        self.assertEqual(stripped["straggler"], 2)
        self.assertIn("no call has a time of its own", out)
        self.assertIn("the calls are counted, not timed", out)
        # The console's time column and every rank's comm ms are '-', the CSV's cells empty.
        lines = out.splitlines()
        header = lines.index(next(line for line in lines if line.lstrip().startswith("op ")))
        for line in lines[header + 1:header + 1 + len(stripped["collectives"])]:
            self.assertEqual(line.split()[5], "-", line)  # op dtype size group calls time ...
        ranks_header = lines.index(next(line for line in lines if line.lstrip().startswith("rank ")))
        for line in lines[ranks_header + 1:ranks_header + 5]:
            self.assertEqual(line.split()[2], "-", line)  # rank host comm ...
        with open(csv_path, newline="") as f:
            rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
        self.assertEqual([r["seconds"] for r in rows if r["record"] == "collective"],
                         [""] * len(stripped["collectives"]))
        self.assertEqual([r["communication_seconds"] for r in rows if r["record"] == "rank"], [""] * 4)


def raw_cpu_exposed_us(doc):
    events = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
    callers = {e["tid"] for e in events if e.get("cat") == "cpu_op" and e["name"].startswith("c10d::")}
    comm = merged((e["ts"], e["ts"] + e["dur"]) for e in events if e["name"].startswith("gloo:"))
    busy = merged((e["ts"], e["ts"] + e["dur"]) for e in events
                  if e.get("cat") == "cpu_op" and e["name"].startswith("aten::") and e["tid"] in callers)
    covered = sum(max(0, min(end, b) - max(start, a)) for start, end in comm for a, b in busy)
    return sum(end - start for start, end in comm) - covered


if __name__ == "__main__":
    unittest.main()
