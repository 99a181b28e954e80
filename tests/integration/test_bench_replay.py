"""bench-replay on real torch.profiler traces (tests/fixtures/traces: 4 gloo ranks on CPU,
recorded by record-traces.sh from real PyTorch DDP, FSDP2 and DeepSpeed ZeRO-3 jobs).

What the command reports is checked against the raw traces, read here independently: the
calls per operation come from the `c10d::` operators, the bytes from gloo's own ranges
(the backend's view of what it moved), the straggler from the run where rank 2 slept
50 ms before its backward. Bad input is exit 2 with one line naming the file and no
result file left behind.
"""
import csv
import gzip
import json
import os
import shutil
import subprocess
import tempfile
import unittest

from replay_test_support import (BIN, C10D_OPS, COLLECTIVES, HERE, MPIEXEC, TRACES, CASES, FolderCase, load, rank_files,
                                  merged, ranks_of, raw_counts, raw_gloo_bytes, run)

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

    @staticmethod
    def replay_json(folder, case):
        json_path = os.path.join(folder, case + "-traces.json")
        code, _, err = run(os.path.join(TRACES, case), "--json", json_path, "--force")
        assert code == 0, err
        with open(json_path) as f:
            return json.load(f)

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
        self.assertEqual(doc["schema"], "commbench.replay/2")
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
        traced = self.classes(Reading.replay_json(self.dir, "zero3"))
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


@unittest.skipUnless(COLLECTIVES and MPIEXEC, "COMMBENCH_BENCH_COLLECTIVES or COMMBENCH_MPIEXEC not set")
class Fabric(unittest.TestCase):
    """--fabric against a real bench-collectives sweep on 4 MPI ranks of this machine."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="commbench-replay-fabric-")
        cls.sweep = os.path.join(cls.dir, "sweep.csv")
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   OMPI_MCA_mpi_yield_when_idle="1")
        p = subprocess.run([MPIEXEC, "-q", "--oversubscribe", "-np", "4", COLLECTIVES, "--backend", "mpi",
                            "--op", "allgather,reducescatter", "-b", "1M", "-e", "8M", "-f", "2", "-n", "3",
                            "-w", "1", "--csv", cls.sweep, "--json", cls.sweep[:-3] + "json"],
                           capture_output=True, text=True, timeout=300, env=env)
        if p.returncode != 0:
            raise AssertionError("bench-collectives failed: " + p.stderr)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def sweep_points(self, op):
        with open(self.sweep, newline="") as f:
            rows = [r for r in csv.DictReader(line for line in f if not line.startswith("#")) if r["op"] == op]
        return sorted((int(r["bytes"]), float(r["time_us"]) * 1e-6) for r in rows)

    def test_each_class_is_held_against_the_sweep_at_its_size(self):
        path = os.path.join(self.dir, "fsdp2.json")
        code, out, err = run(os.path.join(TRACES, "fsdp2"), "--fabric", self.sweep, "--json", path)
        self.assertEqual(code, 0, err)
        with open(path) as f:
            doc = json.load(f)
        job = fabric = 0.0
        for c in doc["collectives"]:
            points = self.sweep_points(c["op"])
            below = [t for b, t in points if b <= c["bytes"]][-1]
            above = [t for b, t in points if b >= c["bytes"]][0]
            # 4 MiB and a few bytes: between the sweep's 4 MiB and 8 MiB times.
            self.assertGreaterEqual(c["fabric_seconds"], min(below, above) * 0.999)
            self.assertLessEqual(c["fabric_seconds"], max(below, above) * 1.001)
            self.assertAlmostEqual(c["fabric_ratio"], c["fabric_seconds"] / c["seconds"], places=9)
            self.assertAlmostEqual(c["fabric_busbw_gbps"], c["busbw_gbps"] / c["fabric_ratio"], places=9)
            job += c["seconds"] * c["calls"]
            fabric += c["fabric_seconds"] * c["calls"]
        self.assertAlmostEqual(doc["fabric"]["job_seconds"], job, places=9)
        self.assertAlmostEqual(doc["fabric"]["fabric_seconds"], fabric, places=9)
        self.assertIn(f"{100 * fabric / job:.3g}% of the fabric's busbw", out)

    def test_the_sweeps_json_file_gives_what_its_csv_gives(self):
        docs = []
        for sweep in (self.sweep, self.sweep[:-3] + "json"):
            path = os.path.join(self.dir, "fsdp2-" + sweep[-4:] + ".json")
            code, out, err = run(os.path.join(TRACES, "fsdp2"), "--fabric", sweep, "--json", path)
            self.assertEqual(code, 0, err)
            with open(path) as f:
                docs.append(json.load(f))
        csv_doc, json_doc = docs
        # The same figures, but for the CSV's rounding of time_us and busbw_gbps.
        pairs = list(zip(json_doc["collectives"], csv_doc["collectives"])) + [(json_doc["fabric"], csv_doc["fabric"])]
        self.assertEqual(len(pairs), 3)
        for from_json, from_csv in pairs:
            self.assertGreater(from_json["fabric_seconds"], 0)
            self.assertAlmostEqual(from_json["fabric_seconds"] / from_csv["fabric_seconds"], 1, places=6)

    def test_an_operation_the_sweep_lacks_is_a_note_not_a_guess(self):
        path = os.path.join(self.dir, "ddp.json")
        code, out, err = run(os.path.join(TRACES, "ddp-default"), "--fabric", self.sweep, "--json", path)
        self.assertEqual(code, 0, err)
        with open(path) as f:
            doc = json.load(f)
        self.assertTrue(all(c["fabric_ratio"] is None for c in doc["collectives"]))
        self.assertIn("no fabric figure", out)
        self.assertEqual(doc["fabric"]["verdict"], "no call of the job could be held against the fabric")
        self.assertEqual(doc["fabric"]["cause"], "")
        self.assertNotIn("top cause:", out)

    def test_a_sweep_of_other_nodes_converts_through_busbw_and_says_so(self):
        # The same sweep as if measured on 4 nodes: the one-node job's calls are converted
        # through busbw, and those below the sweep's smallest size take its time.
        other = os.path.join(self.dir, "sweep-4-nodes.csv")
        with open(self.sweep, newline="") as f:
            rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
        with open(other, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            writer.writeheader()
            for row in rows:
                writer.writerow(dict(row, nodes="4"))
        path = os.path.join(self.dir, "zero3-4-nodes.json")
        code, out, err = run(os.path.join(TRACES, "zero3"), "--fabric", other, "--json", path)
        self.assertEqual(code, 0, err)
        with open(path) as f:
            doc = json.load(f)
        smallest = self.sweep_points("allgather")[0]
        small = [c for c in doc["collectives"] if c["op"] == "allgather" and c["bytes"] < smallest[0]]
        self.assertEqual(len(small), 1)
        self.assertAlmostEqual(small[0]["fabric_seconds"], smallest[1], delta=smallest[1] * 1e-3)
        for note in (f"--fabric {other} allgather over 4 ranks on 1 node: converted through busbw from the sweep's "
                     "4 ranks on 4 nodes (extrapolated)",
                     f"--fabric {other} allgather over 4 ranks: sizes below the sweep's smallest ({smallest[0]} B) "
                     "take its time (extrapolated)"):
            self.assertIn(note, doc["provenance"]["notes"])
            self.assertIn("# note: " + note + "\n", out)

    def test_the_top_cause_is_the_one_that_cost_the_most(self):
        """Against a real sweep of this machine (results/mpi-host-2core/default-sweep.csv):
        the straggler run's top cause is the rank that slept, and the time the others waited
        for it is its lateness times the calls it came last to; a healthy run's is not."""
        sweep = os.path.join(HERE, "..", "..", "results", "mpi-host-2core", "default-sweep.csv")
        docs = {}
        for case in ("straggler", "llama-zero3"):
            path = os.path.join(self.dir, case + "-cause.json")
            code, out, err = run(os.path.join(TRACES, case), "--fabric", sweep, "--json", path)
            self.assertEqual(code, 0, err)
            with open(path) as f:
                docs[case] = json.load(f)
            self.assertIn("top cause: " + docs[case]["fabric"]["cause"], out)
            # One host: nothing crossed a NIC, and the report says so rather than a rate.
            self.assertIn("nics: the job ran on one node (its traces name one host): nothing crossed a NIC", out)
            self.assertFalse(docs[case]["nics"]["crosses_nodes"])
            self.assertIsNone(docs[case]["nics"]["gbps_per_nic"])
        late = {r["rank"]: r for r in docs["straggler"]["ranks"]}[2]
        waited = late["lateness_seconds"] * late["last_arrivals"]
        self.assertTrue(docs["straggler"]["fabric"]["cause"].startswith(
            f"one straggling rank: rank 2 (vm) arrives last at 2 of 2 calls; each of the others waits "
            f"{waited * 1e3:.3g} ms in all for it"), docs["straggler"]["fabric"]["cause"])
        self.assertFalse(docs["llama-zero3"]["fabric"]["cause"].startswith("one straggling rank"))


class MeasuredFabric(unittest.TestCase):
    """--measure-fabric: the job's own collectives measured on this job's MPI ranks."""

    def measure(self, ranks, *args):
        folder = tempfile.mkdtemp(prefix="commbench-replay-measured-")
        self.addCleanup(shutil.rmtree, folder, True)
        path = os.path.join(folder, "r.json")
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   OMPI_MCA_mpi_yield_when_idle="1")
        p = subprocess.run([MPIEXEC, "-q", "--oversubscribe", "-np", str(ranks), BIN, *args, "--measure-fabric",
                            "--backend", "mpi", "-n", "3", "-w", "1", "--json", path],
                           capture_output=True, text=True, timeout=300, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(path) as f:
            return p.stdout, json.load(f)

    def test_every_class_gets_a_figure_measured_at_its_size_on_the_jobs_ranks(self):
        out, doc = self.measure(4, os.path.join(TRACES, "zero3"))
        self.assertEqual(doc["fabric"]["basis"], "--measure-fabric: measured here on 4 ranks, 1 node")
        self.assertEqual(len(doc["collectives"]), 4)
        for c in doc["collectives"]:
            with self.subTest(op=c["op"], bytes=c["bytes"]):
                self.assertGreater(c["fabric_busbw_gbps"], 0)
                self.assertAlmostEqual(c["fabric_ratio"], c["busbw_gbps"] / c["fabric_busbw_gbps"], places=6)
                # The fabric's time for one call is its size over the measured algbw.
                self.assertAlmostEqual(c["fabric_busbw_gbps"] * c["fabric_seconds"] * 1e9,
                                       c["bytes"] * (2 * 3 / 4 if c["op"] == "allreduce" else 3 / 4), delta=1)
        self.assertIn("(--measure-fabric: measured here on 4 ranks, 1 node)", out)
        self.assertRegex(out, r"# 4 files read and 4 cases measured here in [0-9.]+ s\n")

    def test_a_job_of_other_groups_is_held_against_this_jobs_through_busbw(self):
        out, doc = self.measure(2, os.path.join(TRACES, "zero3"))
        self.assertEqual(doc["fabric"]["basis"], "--measure-fabric: measured here on 2 ranks, 1 node")
        note = "allgather: the job's groups of 4 ranks held against allgather measured on this job's 2 ranks, through busbw"
        self.assertIn(note, doc["provenance"]["notes"])
        self.assertIn("# note: " + note + "\n", out)


class BadInput(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="commbench-replay-bad-")
        self.outputs = [os.path.join(self.dir, "r.csv"), os.path.join(self.dir, "r.json")]

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def refused(self, *traces):
        code, out, err = run(*traces, "--csv", self.outputs[0], "--json", self.outputs[1])
        self.assertEqual(code, 2, out + err)
        self.assertEqual(len(err.splitlines()), 1, err)
        self.assertTrue(err.startswith("bench-replay: error: "), err)
        for path in self.outputs:
            self.assertFalse(os.path.exists(path), f"{path} left behind")
        return err.strip()

    def path(self, name):
        return os.path.join(self.dir, name)

    def test_a_schedule_of_calls_on_groups_the_trace_does_not_name(self):
        # HSDP on gloo: groups of 2 and of 4, and a gloo trace does not say which a call ran on.
        dump = self.path("h.jsonl")
        err = self.refused(os.path.join(TRACES, "llama-hsdp"), "--dump-schedule", dump)
        self.assertRegex(err, r"^bench-replay: error: --dump-schedule: .*llama-hsdp/rank0\.json\.gz: call 1 "
                              r"\(c10d::_allgather_base_\) runs on a process group the trace does not name")
        self.assertFalse(os.path.exists(dump))

    def test_the_fabric_is_not_measured_on_one_process(self):
        # A collective of one process is a copy, and says nothing of the fabric.
        self.assertEqual(self.refused(os.path.join(TRACES, "straggler"), "--measure-fabric", "--backend", "mpi"),
                         "bench-replay: error: --measure-fabric: measures the job's collectives between this job's "
                         "ranks, and this job has one; run it under mpirun or srun on 2 or more ranks (the traced "
                         "job had 4)")

    def test_the_flags_of_a_replayed_run_are_refused_without_it_and_a_reading_s_with_it(self):
        traces = os.path.join(TRACES, "zero3")
        self.assertEqual(self.refused(traces, "--backend", "mpi"),
                         "bench-replay: error: --backend: only with --replay or --measure-fabric (they run a job)")
        self.assertEqual(self.refused(traces, "-n", "3"),
                         "bench-replay: error: --iters: only with --replay or --measure-fabric (they run a job)")
        self.assertEqual(self.refused(traces, "--trace", self.path("t.json")),
                         "bench-replay: error: --trace: only with --replay (a run of the traced step)")
        self.assertEqual(self.refused(traces, "--measure-fabric", "--trace", self.path("t.json")),
                         "bench-replay: error: --trace: only with --replay (a run of the traced step)")
        with open(self.path("s.csv"), "w") as f:
            f.write("op,bytes,ranks,nodes,time_us,busbw_gbps\n")
        self.assertEqual(self.refused(traces, "--measure-fabric", "--fabric", self.path("s.csv")),
                         "bench-replay: error: --measure-fabric: measures the fabric here; --fabric reads it from "
                         "a file (give one)")
        self.assertIn("--measure-fabric: measures the fabric; --dump-schedule and the model flags",
                      self.refused(traces, "--measure-fabric", "--dump-schedule", self.path("s.jsonl")))
        self.assertEqual(self.refused(traces, "--measure-fabric", "--replay"),
                         "bench-replay: error: --measure-fabric: not with --replay (run them one after the other)")
        self.assertIn("--replay: runs the traced step; --fabric, --dump-schedule and the model flags",
                      self.refused(traces, "--replay", "--dump-schedule", self.path("s.jsonl")))
        self.assertIn("--replay: runs the traced step",
                      self.refused(traces, "--replay", "--pattern", "zero3", "--layers", "2"))
        self.assertFalse(os.path.exists(self.path("t.json")))

    def test_a_file_to_read_that_is_not_there_is_named_first(self):
        # Before the model flags are checked: the file would have said what they ask for.
        self.assertEqual(self.refused(os.path.join(TRACES, "llama-zero3"), "--deepspeed-config", self.path("none.json")),
                         f"bench-replay: error: --deepspeed-config {self.path('none.json')}: cannot read (No such file "
                         "or directory)")
        self.assertEqual(self.refused(os.path.join(TRACES, "llama-zero3"), "--schedule", self.path("none.jsonl"),
                                      "--tp", "2"),
                         f"bench-replay: error: --schedule {self.path('none.jsonl')}: cannot read (No such file or "
                         "directory)")

    def test_help_says_what_dtype_and_schedule_mean_here(self):
        code, out, err = run("--help")
        self.assertEqual(code, 0, err)
        text = " ".join(out.split())
        self.assertIn("also the type of the calls an Nsight Systems report gives only element counts for (default "
                      "float32)", text)
        self.assertIn("to compare the job's traced step with, instead of a modelled pattern", text)
        self.assertNotIn("to run, predict or trace instead of a modelled pattern", text)

    def test_a_model_flag_without_a_model_is_refused_not_passed_over(self):
        traces = os.path.join(TRACES, "straggler")
        for flag in (["--tp", "2"], ["--tflops", "100"], ["--compute-scale", "0.5"], ["--tie-embeddings"],
                     ["--hidden", "10"], ["--first-bucket-mb", "1"]):
            with self.subTest(flag=flag):
                self.assertEqual(self.refused(traces, *flag),
                                 f"bench-replay: error: {flag[0]}: describes the step to compare the job's with; give "
                                 "--pattern, --preset, --layers, --deepspeed-config or --schedule too")
        # With a run of the traced step, a model flag has no place either.
        self.assertIn("--replay: runs the traced step", self.refused(traces, "--replay", "--tp", "2"))
        # --dtype also types the calls of a report that gives only counts.
        code, _, err = run(traces, "--dtype", "float")
        self.assertEqual(code, 0, err)

    def test_a_topology_that_is_not_bench_topologys(self):
        sweep = os.path.join(HERE, "..", "..", "results", "mpi-host-2core", "replay-fabric", "sweep.csv")
        dump = self.path("s.jsonl")
        err = self.refused(os.path.join(TRACES, "llama-ddp"), "--topology", sweep, "--dump-schedule", dump)
        self.assertTrue(err.endswith("sweep.csv: not a file bench-topology --json wrote (no \"nodes\")"), err)
        self.assertFalse(os.path.exists(dump))
        self.assertIn("--topology", self.refused(os.path.join(TRACES, "llama-ddp"), "--topology", self.path("none")))

    def test_a_gzip_cut_short_names_the_file_and_offset(self):
        with open(rank_files("fsdp2")[0], "rb") as f:
            data = f.read()
        cut = self.path("cut.json.gz")
        with open(cut, "wb") as f:
            f.write(data[: len(data) // 2])
        err = self.refused(cut)
        self.assertRegex(err, r"cut\.json\.gz: cannot read at byte [0-9]+ of its text \(.+\)$")

    def test_a_json_cut_short_names_the_byte(self):
        with gzip.open(rank_files("ddp-default")[0], "rb") as f:
            text = f.read()
        cut = self.path("cut.json")
        with open(cut, "wb") as f:
            f.write(text[:5000])
        self.assertTrue(self.refused(cut).endswith("cut.json: not a whole JSON trace: cut short after byte 5000"))

    def test_a_file_of_another_format(self):
        other = self.path("sweep.csv")
        with open(other, "w") as f:
            f.write("op,bytes\nallreduce,8\n")
        # Not named .json: read as a DeepSpeed comms log, which it is not either.
        self.assertTrue(self.refused(other).endswith(
            "sweep.csv: neither a DeepSpeed log_summary() table nor a verbose comms_logger line in it (and not a "
            ".json trace)"))
        misnamed = self.path("trace.json")
        shutil.copy(other, misnamed)
        self.assertIn("trace.json: not a whole JSON trace: malformed at byte 1", self.refused(misnamed))

    def test_a_deepspeed_log_without_ranks_cut_short_or_with_traces(self):
        log = os.path.join(TRACES, "zero3", "comms-summary.txt")
        self.assertTrue(self.refused(log).endswith(
            "comms-summary.txt: a DeepSpeed comms log does not say the world size: give --ranks N"))
        self.assertIn("a DeepSpeed comms log is read on its own", self.refused(log, os.path.join(TRACES, "zero3")))
        self.assertEqual(self.refused(os.path.join(TRACES, "zero3"), "--ranks", "4"),
                         "bench-replay: error: --ranks: only for a DeepSpeed comms log (a trace says its world size)")
        with open(log) as f:
            text = f.read()
        cut_at = text.index("32.03 MB") + 30
        cut = self.path("cut.log")
        with open(cut, "w") as f:
            f.write(text[:cut_at])
        line_start = text.rindex("\n", 0, cut_at) + 1
        self.assertTrue(self.refused(cut, "--ranks", "4").endswith(
            f"cut.log: line {text[:cut_at].count(chr(10)) + 1} (byte offset {line_start}): the file ends inside a "
            "log_summary row (a cut log?)"))
        self.assertIn("--ranks", self.refused(log, "--ranks", "0"))

    def test_a_trace_without_communication(self):
        doc = load(rank_files("ddp-default")[0])
        doc["traceEvents"] = [e for e in doc["traceEvents"]
                              if not e.get("name", "").startswith(("c10d::", "gloo:"))]
        quiet = self.path("quiet.json")
        with open(quiet, "w") as f:
            json.dump(doc, f)
        self.assertRegex(self.refused(quiet), r"quiet\.json: no communication in the trace of rank 0 \([0-9]+ events read\)$")
        # A real one: FSDP2 on a single rank runs its hooks (FSDP::pre_forward, ...) but no
        # collective, as a one-GPU machine runs it.
        one_rank = os.path.join(TRACES, "llama-fsdp2-1rank")
        doc = load(rank_files("llama-fsdp2-1rank")[0])
        self.assertEqual(doc["distributedInfo"]["world_size"], 1)
        self.assertTrue(any(e.get("name", "").startswith("FSDP::pre_forward") for e in doc["traceEvents"]))
        self.assertRegex(self.refused(one_rank), r"llama-fsdp2-1rank/rank0\.json\.gz: no communication in the trace "
                                                 r"of rank 0 \([0-9]+ events read\)$")

    def test_ranks_of_different_runs_or_twice(self):
        ddp, fsdp = rank_files("ddp-default"), rank_files("fsdp2")
        self.assertIn("the traces do not line up", self.refused(ddp[0], *fsdp[1:]))
        self.assertIn("are both rank 0", self.refused(ddp[0], ddp[0]))
        # The same job and step, recorded half an hour apart: the calls never met.
        straggler = rank_files("straggler")
        self.assertRegex(self.refused(ddp[0], ddp[1], *straggler[2:]),
                         r"call 1 \(allreduce\) ended in .*ddp-default/rank0\.json\.gz [0-9]+ s before "
                         r".*straggler/rank[23]\.json\.gz called it: traces of different runs")

    def test_some_of_the_ranks_name_no_straggler(self):
        code, out, err = run(rank_files("straggler")[0], "--json", self.outputs[1])
        self.assertEqual(code, 0, err)
        self.assertIn("verdict: no straggler can be named: 1 of the job's 4 ranks was read", out)
        with open(self.outputs[1]) as f:
            doc = json.load(f)
        self.assertIsNone(doc["straggler"])
        self.assertEqual(doc["provenance"]["nodes"], 0)  # not known from one rank of four
        # Every rank: the hosts are the traces'.
        code, out, err = run(os.path.join(TRACES, "straggler"), "--json", self.outputs[1], "--force")
        self.assertEqual(code, 0, err)
        with open(self.outputs[1]) as f:
            doc = json.load(f)
        self.assertEqual(doc["straggler"], 2)
        self.assertEqual(doc["provenance"]["rank_hosts"], ["vm"] * 4)
        self.assertEqual(doc["provenance"]["nodes"], 1)

    def test_a_result_file_that_is_a_file_read_or_another_result_file(self):
        folder = self.path("job")
        shutil.copytree(os.path.join(TRACES, "straggler"), folder)
        rank0 = os.path.join(folder, "rank0.json.gz")
        with open(rank0, "rb") as f:
            before = f.read()
        sweep = self.path("sweep.csv")
        shutil.copy(os.path.join(HERE, "..", "..", "results", "mpi-host-2core", "replay-fabric", "sweep.csv"), sweep)
        cases = [
            ([folder, "--csv", rank0, "--force"], f"--csv {rank0}: a file this run reads (TRACE {rank0})"),
            ([folder, "--json", os.path.join(folder, "..", "job", "rank0.json.gz"), "--force"], "a file this run reads"),
            ([folder, "--fabric", sweep, "--csv", sweep, "--force"], f"--csv {sweep}: a file this run reads (--fabric"),
            ([folder, "--dump-schedule", self.path("d.out"), "--csv", self.path("d.out")],
             f"--dump-schedule: same file as --csv ({self.path('d.out')})"),
        ]
        for args, message in cases:
            code, out, err = run(*args)
            self.assertEqual(code, 2, out + err)
            self.assertEqual(len(err.splitlines()), 1, err)
            self.assertIn(message, err)
        self.assertFalse(os.path.exists(self.path("d.out")), "the schedule was written before the refusal")
        with open(rank0, "rb") as f:
            self.assertEqual(f.read(), before, "the trace was overwritten")
        with open(sweep) as f, open(os.path.join(HERE, "..", "..", "results", "mpi-host-2core", "replay-fabric",
                                                 "sweep.csv")) as original:
            self.assertEqual(f.read(), original.read(), "the sweep was overwritten")
        # A result file in the traces' folder that is not one of them is fine.
        code, out, err = run(folder, "--csv", os.path.join(folder, "replay.csv"))
        self.assertEqual(code, 0, out + err)

    def test_a_fabric_file_that_cannot_be_read(self):
        code, _, err = run(os.path.join(TRACES, "ddp-default"), "--fabric", self.path("none.csv"))
        self.assertEqual(code, 2)
        self.assertEqual(err.strip(), f"bench-replay: error: --fabric {self.path('none.csv')}: cannot read "
                                      "(No such file or directory)")

    def test_a_folder_of_json_but_no_trace(self):
        folder = self.path("configs")
        os.mkdir(folder)
        shutil.copy(os.path.join(TRACES, "zero3", "ds_config.json"), folder)
        self.assertRegex(self.refused(folder), r"no trace among the files given \(.*ds_config\.json passed over: "
                                               r"not a Chrome trace\)$")
        # Named on the command line, a file that is no trace is an error of its own.
        self.assertTrue(self.refused(os.path.join(folder, "ds_config.json")).endswith(
            "ds_config.json: not a Chrome trace (no traceEvents array)"))

    def test_json_that_is_no_object_in_a_folder_is_passed_over(self):
        folder = self.path("job")
        shutil.copytree(os.path.join(TRACES, "straggler"), folder)
        with open(os.path.join(folder, "list.json"), "w") as f:
            f.write("[1, 2]\n")
        code, out, err = run(folder)
        self.assertEqual(code, 0, err)
        self.assertIn(f"# note: {folder}/list.json passed over: not a Chrome trace\n", out)
        self.assertTrue(self.refused(os.path.join(folder, "list.json")).endswith(
            "list.json: not a Chrome trace (its JSON is not an object with a traceEvents array)"))

    def test_a_pipe_is_refused_not_waited_on(self):
        fifo = self.path("trace.json")
        os.mkfifo(fifo)
        self.assertTrue(self.refused(fifo).endswith(
            "trace.json: not a file or folder of traces (a pipe or device is not read)"))

    def test_a_folder_without_traces_and_no_trace_at_all(self):
        empty = self.path("empty")
        os.mkdir(empty)
        self.assertTrue(self.refused(empty).endswith(
            "empty: no trace (.json, .json.gz) or Nsight Systems report (.sqlite, .sqlite.gz, .nsys-rep) in this folder"))
        code, _, err = run()
        self.assertEqual(code, 2)
        self.assertIn("TRACE", err)


if __name__ == "__main__":
    unittest.main()
