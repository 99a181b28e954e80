"""bench-replay's step as a schedule and against bench-patterns' model, on the real traces
of tests/fixtures/traces: --dump-schedule read back by bench-patterns --schedule (predicted,
and run on 4 MPI ranks), and the llama-* fixtures held call for call against the step
bench-patterns models for the same model and framework.
"""
import gzip
import json
import re
import os
import shutil
import subprocess
import tempfile
import unittest

from replay_test_support import (BIN, HERE, LLAMA_MODEL, MPI_ENV, MPIEXEC, PATTERNS, SWEEP, TRACES, CASES, C10D_OPS,
                                  FolderCase, hybrid_job_calls, hybrid_model_calls, load, model_of, pattern_flags,
                                  ranks_of, rank_files, raw_counts, read_jsonl, run)


def traced_calls(case, rank):
    """(world size, the operation of each c10d call of a rank's trace in order), read from
    the raw JSON; with profiler steps, the calls of the first step that holds any."""
    doc = load(rank_files(case)[rank])
    world = doc["distributedInfo"]["world_size"]
    events = sorted((e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "cpu_op"
                     and e.get("name") in C10D_OPS), key=lambda e: e["ts"])
    # The first profiler step that holds calls (the dump's step), when the trace has steps.
    steps = sorted((e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#")),
                   key=lambda e: e["ts"])
    for step in steps:
        inside = [e for e in events if step["ts"] <= e["ts"] <= step["ts"] + step["dur"]]
        if inside:
            events = inside
            break
    return world, [C10D_OPS[event["name"]] for event in events]


@unittest.skipUnless(PATTERNS, "COMMBENCH_BENCH_PATTERNS not set")
class Schedule(FolderCase):
    """--dump-schedule: the traced step in bench-patterns' format, read back by
    bench-patterns --schedule to predict it."""

    PREFIX = "commbench-replay-schedule-"

    def dump(self, case):
        path = os.path.join(self.dir, case + ".jsonl")
        json_path = os.path.join(self.dir, case + ".json")
        code, out, err = run(os.path.join(TRACES, case), "--dump-schedule", path, "--json", json_path, "--force")
        self.assertEqual(code, 0, err)
        with open(json_path) as f:
            return read_jsonl(path), json.load(f), out

    def test_the_dump_is_every_ranks_calls_in_order(self):
        for case in CASES:
            with self.subTest(case=case):
                lines, doc, out = self.dump(case)
                self.assertIn("--dump-schedule: the compute between calls", out)
                for rank in range(ranks_of(case)):
                    _, calls = traced_calls(case, rank)
                    mine = [l for l in lines if l["rank"] == rank]
                    ops = [l["op"] for l in mine if l["kind"] == "collective"]
                    # A barrier is replayed as NCCL runs it: an allreduce of one float.
                    self.assertEqual(ops, ["allreduce" if c == "barrier" else c for c in calls])
                    self.assertEqual([l["step"] for l in mine], list(range(len(mine))))
                    for line in mine:
                        if line["kind"] == "collective":
                            self.assertEqual(line["waits_for"], [line["step"] - 1])
                            self.assertEqual(line["group"], "data")
                bytes_by_op = {}
                for line in lines:
                    if line["rank"] == 0 and line["kind"] == "collective":
                        bytes_by_op[line["op"]] = bytes_by_op.get(line["op"], 0) + line["bytes"]
                if len(doc["steps"]) > 1:
                    # The dump is the first step's: its bytes are that step's (no barriers).
                    self.assertEqual(sum(bytes_by_op.values()), doc["steps"][0]["bytes"])
                    continue
                summary = {}
                for c in doc["collectives"]:
                    op = "allreduce" if c["op"] == "barrier" else c["op"]
                    summary[op] = summary.get(op, 0) + (4 if c["op"] == "barrier" else c["bytes"]) * c["calls"]
                self.assertEqual(bytes_by_op, summary)

    def test_bench_patterns_predicts_the_dumped_step_and_dumps_it_back(self):
        lines, _, _ = self.dump("zero3")
        json_path = os.path.join(self.dir, "p.json")
        p = subprocess.run([PATTERNS, "--schedule", os.path.join(self.dir, "zero3.jsonl"), "--predict", "--nodes", "1",
                            "--gpus-per-node", "4", "--from", os.path.join(HERE, "..", "..", "results",
                                                                           "mpi-host-2core", "replay-fabric",
                                                                           "sweep.csv"),
                            "--json", json_path], capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("PREDICTED (nothing run) schedule, tp 1 x pp 1 x dp 4", p.stdout)
        with open(json_path) as f:
            doc = json.load(f)
        counts = {t["type"]: t["count"] for t in doc["types"]}
        ops = [l["op"] for l in lines if l["rank"] == 0 and l["kind"] == "collective"]
        self.assertEqual(counts, {f"{op}/data": ops.count(op) for op in set(ops)})
        compute = sum(l["seconds"] for l in lines if l["rank"] == doc["breakdown_rank"] and l["kind"] == "compute")
        self.assertAlmostEqual(doc["mean_step"]["compute_seconds"], compute, delta=1e-9 + 1e-6 * compute)
        self.assertEqual(doc["provenance"]["settings"]["pattern"], "schedule")

    def test_bad_schedules_and_flags_are_one_line(self):
        schedule = os.path.join(self.dir, "bad.jsonl")
        with open(schedule, "w") as f:
            f.write('{"step": 0, "rank": 0, "kind": "collective", "op": "allreduce"}\n')
        for args, message in [
                (["--schedule", schedule, "--predict", "--gpus-per-node", "4"],
                 f"--schedule {schedule}: line 1: no \"bytes\""),
                (["--schedule", schedule, "--pattern", "ddp", "--predict", "--gpus-per-node", "4"],
                 f"--schedule: the step comes from {schedule}; --pattern, --preset and --deepspeed-config "
                 "describe another"),
                (["--schedule", schedule, "--tune"],
                 "--schedule: not with --tune (a file's step has no framework settings to tune)"),
                (["--pattern", "ddp", "--predict", "--nodes", "1025", "--gpus-per-node", "4", "--dump-schedule",
                  os.path.join(self.dir, "big.jsonl")],
                 "--dump-schedule: 4100 ranks' schedules is more than the 4096 it writes")]:
            p = subprocess.run([PATTERNS, *args], capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertEqual(p.stderr.strip(), "bench-patterns: error: " + message)
        code, _, err = run(os.path.join(TRACES, "zero3", "comms-summary.txt"), "--ranks", 4, "--dump-schedule",
                           os.path.join(self.dir, "x.jsonl"))
        self.assertEqual(code, 2)
        self.assertIn("--dump-schedule: needs the job's traces", err)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "x.jsonl")))
        self.assertFalse(os.path.exists(os.path.join(self.dir, "big.jsonl")))


@unittest.skipUnless(PATTERNS and MPIEXEC, "COMMBENCH_BENCH_PATTERNS or COMMBENCH_MPIEXEC not set")
class ReplayOnRanks(unittest.TestCase):
    """The extracted step run on 4 MPI ranks of this machine by bench-patterns --schedule:
    the job's calls, their sizes and order, on the fabric at hand."""

    def test_the_zero3_step_runs_call_for_call(self):
        folder = tempfile.mkdtemp(prefix="commbench-replay-ranks-")
        self.addCleanup(shutil.rmtree, folder, True)
        schedule, json_path = os.path.join(folder, "s.jsonl"), os.path.join(folder, "r.json")
        code, _, err = run(os.path.join(TRACES, "zero3"), "--dump-schedule", schedule)
        self.assertEqual(code, 0, err)
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   OMPI_MCA_mpi_yield_when_idle="1")
        p = subprocess.run([MPIEXEC, "-q", "--oversubscribe", "-np", "4", PATTERNS, "--backend", "mpi",
                            "--schedule", schedule, "-n", "1", "-w", "0", "--json", json_path],
                           capture_output=True, text=True, timeout=300, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(json_path) as f:
            doc = json.load(f)
        lines = read_jsonl(schedule)
        expected = {}
        for line in lines:
            if line["rank"] == 0 and line["kind"] == "collective":
                key = line["op"] + "/data"
                count, size = expected.get(key, (0, 0))
                expected[key] = (count + 1, size + line["bytes"])
        self.assertEqual({t["type"]: (t["count"], t["bytes"]) for t in doc["types"]}, expected)
        self.assertEqual(doc["provenance"]["ranks"], 4)

    def test_bench_replay_runs_the_traced_step_itself(self):
        """--replay: the step --dump-schedule writes, run by bench-replay on 4 ranks, the
        job's own table before it; its files are the replayed step's, its trace every rank's."""
        folder = tempfile.mkdtemp(prefix="commbench-replay-ranks-")
        self.addCleanup(shutil.rmtree, folder, True)
        schedule, json_path, trace = (os.path.join(folder, name) for name in ("s.jsonl", "r.json", "t.json"))
        code, _, err = run(os.path.join(TRACES, "zero3"), "--dump-schedule", schedule)
        self.assertEqual(code, 0, err)
        p = subprocess.run([MPIEXEC, "-q", "--oversubscribe", "-np", "4", BIN, os.path.join(TRACES, "zero3"),
                            "--replay", "--backend", "mpi", "-n", "1", "-w", "0", "--json", json_path, "--trace", trace],
                           capture_output=True, text=True, timeout=300, env=MPI_ENV)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertLess(p.stdout.index("verdict: no straggler"), p.stdout.index("# replaying the traced step"))
        self.assertIn("# replaying the traced step (4 files) on this job's 4 ranks", p.stdout)
        self.assertIn("# bench-patterns: schedule, tp 1 x pp 1 x dp 4", p.stdout)
        # Last, each operation's calls in the job beside the replay's: the same calls.
        table = p.stdout[p.stdout.index("# each operation in the job and replayed here"):].splitlines()[2:]
        calls = {row.split()[0]: (int(row.split()[1]), int(row.split()[3])) for row in table if row.strip()}
        self.assertEqual(calls, {"allgather": (9, 9), "allreduce": (1, 1), "reducescatter": (1, 1)})
        with open(json_path) as f:
            doc = json.load(f)
        self.assertEqual(doc["schema"], "commbench.patterns/2")
        expected = {}
        for line in read_jsonl(schedule):
            if line["rank"] == 0 and line["kind"] == "collective":
                count, size = expected.get(line["op"] + "/data", (0, 0))
                expected[line["op"] + "/data"] = (count + 1, size + line["bytes"])
        self.assertEqual({t["type"]: (t["count"], t["bytes"]) for t in doc["types"]}, expected)
        with open(trace) as f:
            events = json.load(f)["traceEvents"]
        self.assertEqual({e["pid"] for e in events if e.get("ph") == "X"}, {0, 1, 2, 3})

    def test_bench_replay_refuses_to_replay_a_comms_log(self):
        p = subprocess.run([MPIEXEC, "-q", "--oversubscribe", "-np", "2", BIN,
                            os.path.join(TRACES, "zero3", "comms-summary.txt"), "--ranks", "2", "--replay",
                            "--backend", "mpi", "-n", "1"],
                           capture_output=True, text=True, timeout=300, env=MPI_ENV)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertEqual(p.stdout, "")
        self.assertEqual(p.stderr.strip(), "bench-replay: error: --replay: needs the job's traces; a DeepSpeed comms "
                                           "log does not say the calls' order")

    def test_bench_replay_refuses_a_job_of_another_size(self):
        p = subprocess.run([MPIEXEC, "-q", "--oversubscribe", "-np", "2", BIN, os.path.join(TRACES, "zero3"),
                            "--replay", "--backend", "mpi", "-n", "1"],
                           capture_output=True, text=True, timeout=300, env=MPI_ENV)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertEqual(p.stdout, "")
        self.assertEqual(p.stderr.strip(), "bench-replay: error: --replay: the traces are of a job of 4 ranks and "
                                           "this job has 2; run it on 4 ranks")


@unittest.skipUnless(PATTERNS and MPIEXEC, "COMMBENCH_BENCH_PATTERNS or COMMBENCH_MPIEXEC not set")
class AgainstTheModel(FolderCase):
    """The llama-* fixtures (a Llama-shaped model that bench-patterns can describe exactly)
    against bench-patterns' model of the same step: the job's calls counted from the raw
    trace, the model's from bench-patterns' own --dump-schedule on 4 MPI ranks."""
    PREFIX = "commbench-replay-model-"

    def compare(self, case, *pattern):
        json_path = os.path.join(self.dir, case + ".json")
        code, out, err = run(os.path.join(TRACES, case), *pattern, *model_of(case), "--json", json_path, "--force")
        self.assertEqual(code, 0, err)
        with open(json_path) as f:
            return out, json.load(f)["model"]

    def modelled(self, case, *pattern):
        """The model's calls on rank 0, from bench-patterns --dry-run --dump-schedule."""
        dump = os.path.join(self.dir, case + "-model.jsonl")
        p = subprocess.run([MPIEXEC, "-q", "--oversubscribe", "-np", str(ranks_of(case)), PATTERNS, *pattern,
                            *model_of(case), "--dry-run", "--dump-schedule", dump, "--force"],
                           capture_output=True, text=True, timeout=120, env=MPI_ENV)
        self.assertEqual(p.returncode, 0, p.stderr)
        return [l for l in read_jsonl(dump) if l["rank"] == 0 and l["kind"] != "compute"]

    def test_the_conformance_cases(self):
        """Each llama case beside the framework's defaults against bench-patterns' step for
        the same settings: alike call for call. llama-zero3-small (prefetch and reduce
        buckets near the layers' sizes, reuse distance 0) re-gathers the first layer's
        attention and the embedding while forward still runs (docs/patterns.md); the
        settings --tune reaches (no reuse, no prefetch, a user's start) hold too."""
        cases = ("llama-ddp-bucket1mb", "llama-ddp-accum2", "llama-fsdp2-keep", "llama-zero1", "llama-zero2",
                 "llama-zero3-nooverlap", "llama-zero3-2ranks", "llama-zero3-small", "llama-zero3-noreuse",
                 "llama-zero3-noprefetch", "llama-zero3-users", "llama-fsdp1",
                 "llama-fsdp1-3ranks", "llama-fsdp1-keep", "llama-tied-ddp", "llama-tied-fsdp2", "llama-tied-zero3")
        cases = {case: pattern_flags(case) for case in cases}
        for case, flags in cases.items():
            with self.subTest(case=case):
                _, model = self.compare(case, *flags)
                self.assertEqual({o["op"]: o["job_calls"] for o in model["operations"] if o["job_calls"]},
                                 raw_counts(load(rank_files(case)[0])))
                self.assertIsNone(model["first_difference"], model)
                self.assertEqual(model["same_prefix"], model["job_calls"])
                self.assertEqual(model["job_calls"], model["model_calls"])

    def test_ddp_fsdp2_and_zero3_match_the_model_call_for_call(self):
        """On 3 ranks no tensor divides evenly: FSDP2 pads each parameter's rows and
        DeepSpeed each partition, and the model must pad as they do."""
        for case in ("llama-ddp", "llama-fsdp2", "llama-zero3", "llama-fsdp2-3ranks", "llama-zero3-3ranks"):
            pattern = pattern_flags(case)
            with self.subTest(case=case):
                out, model = self.compare(case, *pattern)
                self.assertIsNone(model["first_difference"])
                self.assertEqual(model["same_prefix"], model["job_calls"])
                self.assertIn("alike, call for call", out)
                self.assertEqual({o["op"]: o["job_calls"] for o in model["operations"]},
                                 raw_counts(load(rank_files(case)[0])))
                modelled = self.modelled(case, *pattern)
                self.assertEqual({o["op"]: (o["model_calls"], o["model_bytes"]) for o in model["operations"]},
                                 {op: (len([l for l in modelled if l["op"] == op]),
                                       sum(l["bytes"] for l in modelled if l["op"] == op))
                                  for op in {l["op"] for l in modelled}})

    def test_fsdp1s_flat_padding_is_told_apart_from_fsdp2s_on_3_ranks(self):
        out, model = self.compare("llama-fsdp2-3ranks", "--pattern", "fsdp", "--fsdp-version", "1")
        self.assertEqual(model["same_prefix"], 0)
        gathered = next(e for e in sorted(load(rank_files("llama-fsdp2-3ranks")[0])["traceEvents"],
                                          key=lambda e: e.get("ts", 0)) if e.get("name") == "gloo:all_gather")
        job_bytes = 3 * 4 * gathered["args"]["Input Dims"][0][0]
        self.assertTrue(model["first_difference"].startswith(f"call 1: the job ran allgather of {job_bytes} B, "),
                        model["first_difference"])

    def test_zero3s_first_call_gathers_the_embedding_with_the_prefetch_bucket(self):
        config = os.path.join(TRACES, "llama-zero3", "ds_config.json")
        modelled = self.modelled("llama-zero3", "--deepspeed-config", config)
        self.assertEqual(modelled[0]["label"], "prefetch embed_tokens")
        first = next(e for e in sorted(load(rank_files("llama-zero3")[0])["traceEvents"], key=lambda e: e.get("ts", 0))
                     if e.get("name") == "gloo:all_gather")
        gathered = 4 * 4 * first["args"]["Input Dims"][0][0]  # float32, 4 ranks' shares
        self.assertEqual(modelled[0]["bytes"], gathered)
        self.assertGreater(gathered, 1000 * 256 * 4)  # more than the embedding alone

    def test_zero3s_gathers_are_those_deepspeeds_coordinator_logged(self):
        """llama-zero3-small/coordinator-debug.log.gz is DeepSpeed's own debug log of that
        case (coordinator_log.py): every module's fetch with its trace step, every parameter
        gathered. Its steady step (the second, once the trace is complete) gathers, module by
        module, what bench-patterns' model gathers, in the same order."""
        with gzip.open(os.path.join(TRACES, "llama-zero3-small", "coordinator-debug.log.gz"), "rt") as f:
            lines = f.read().splitlines()
        steps = [i for i, line in enumerate(lines) if line.startswith("0: M")]
        self.assertGreaterEqual(len(steps), 2, "no steady step in the log")
        logged, group = [], 0
        for line in lines[steps[1]:steps[2] if len(steps) > 2 else len(lines)]:
            if re.match(r"\d+: M\d+\(", line) and group:
                logged.append(group)
                group = 0
            gathered = re.match(r"-(pre)?fetch: \{'id': \d+, 'status': 'NOT_AVAILABLE', .*'ds_numel': (\d+)", line)
            if gathered:
                group += int(gathered.group(2))
        if group:
            logged.append(group)
        config = os.path.join(TRACES, "llama-zero3-small", "ds_config.json")
        modelled = [c["bytes"] // 4 for c in self.modelled("llama-zero3-small", "--deepspeed-config", config)
                    if c["op"] == "allgather" and c["phase"] != "optimizer"]
        self.assertEqual(modelled, logged)
        self.assertEqual(len(logged), 12)  # ten for forward, two re-gathers for backward

    def test_the_other_cases_run_every_call_on_all_their_ranks_as_the_model_does(self):
        """The group, for the cases of one process group: every group the trace lists spans
        the job's ranks, and every call of bench-patterns' step for the same settings is on
        the data-parallel group of all ranks (its dump's groups)."""
        cases = [c for c in CASES if c.startswith("llama-")]
        for case in cases:
            with self.subTest(case=case):
                info = load(rank_files(case)[0])["distributedInfo"]
                self.assertEqual({g["pg_size"] for g in info["pg_config"]}, {ranks_of(case)})
                dump = os.path.join(self.dir, case + "-groups.jsonl")
                p = subprocess.run([PATTERNS, "--predict", "--from", SWEEP, "--nodes", "1", "--gpus-per-node",
                                    str(ranks_of(case)), *pattern_flags(case), *model_of(case), "--dump-schedule",
                                    dump, "--force"], capture_output=True, text=True, timeout=120)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual({l["group"] for l in read_jsonl(dump) if l["kind"] != "compute"}, {"data"})

    def test_hybrid_sharding_matches_in_op_bytes_group_and_order(self):
        """llama-hsdp (fully_shard) and llama-fsdp1-hybrid (the wrapper's HYBRID_SHARD) on a
        2 x 2 mesh: the trace says what each call was; PyTorch's flight recorder, recorded
        beside it, which group ran it. In order, they are bench-patterns' hybrid_shard step
        on 2 nodes of 2 ranks (reduce-scatter in the node, all-reduce of the shard across)."""
        for case in ("llama-hsdp", "llama-fsdp1-hybrid"):
            with self.subTest(case=case):
                job, calls, entries, log = hybrid_job_calls(os.path.join(TRACES, case))
                self.assertEqual(len(calls), len(entries))
                self.assertEqual(sorted(log["groups"].values()), [[0, 1], [0, 1, 2, 3], [0, 2]])
                for call, entry in zip(calls, entries):
                    # gloo runs a reduce-scatter as an all-reduce of the whole input: the
                    # recorder names the backend's work, the trace the call.
                    self.assertEqual(entry["profiling_name"],
                                     {"allgather": "gloo:all_gather"}.get(C10D_OPS[call["name"]], "gloo:all_reduce"))
                    self.assertEqual(entry["input_dtypes"], ["Float"])
                modelled, err = hybrid_model_calls(case, None, os.path.join(self.dir, case + "-model.jsonl"))
                self.assertIsNotNone(modelled, err)
                self.assertEqual(job, modelled)
                self.assertEqual({g for _, _, g in job}, {2})
                self.assertEqual({op for op, _, _ in job}, {"allgather", "reducescatter", "allreduce"})

    def test_a_model_of_other_settings_is_told_apart_at_the_first_call_that_differs(self):
        # 1 MiB buckets: the first bucket is alike (DDP caps it at 1 MiB either way), the
        # second is not.
        out, model = self.compare("llama-ddp", "--pattern", "ddp", "--bucket-cap-mb", "1")
        modelled = self.modelled("llama-ddp", "--pattern", "ddp", "--bucket-cap-mb", "1")
        self.assertEqual(model["model_calls"], len(modelled))
        self.assertGreater(model["model_calls"], model["job_calls"])
        self.assertEqual(model["same_prefix"], 2)
        second_bucket = modelled[2]
        self.assertTrue(model["first_difference"].startswith("call 3: the job ran allreduce of "), model)
        self.assertIn(f"({second_bucket['label']}, {second_bucket['phase']})", model["first_difference"])
        self.assertIn("first difference: call 3:", out)

    def test_a_comms_log_is_not_compared(self):
        code, _, err = run(os.path.join(TRACES, "zero3", "comms-summary.txt"), "--ranks", 4, "--pattern", "zero3",
                           *LLAMA_MODEL)
        self.assertEqual(code, 2)
        self.assertIn("a modelled step is compared with the job's traces", err)


if __name__ == "__main__":
    unittest.main()
