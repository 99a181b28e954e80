"""bench-patterns under mpirun on the MPI host backend (issue 15): every pattern on real
ranks, a tp x pp x dp layout on sub-communicators, exposed communication at both ends,
the dry run and the result files. The model is small (a few million parameters) so that a
step takes milliseconds on host memory; its shape is what the schedules follow."""
import csv
import json
import re
import os
import shutil
import subprocess
import tempfile
import unittest


PATTERNS = os.environ.get("COMMBENCH_BENCH_PATTERNS", "build/bench/bench-patterns")
MPIEXEC = os.environ.get("COMMBENCH_MPIEXEC", "mpirun")
# Four blocks of hidden 256: every pattern's schedule has several collectives per step.
SMALL_MODEL = ["--params", "5M", "--layers", "4", "--hidden", "256", "--ffn", "1024", "--seq", "128"]
PATTERNS_LIST = ["ddp", "fsdp", "zero1", "zero2", "zero3", "pipeline", "tp", "ep"]


def run(np, *args):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    cmd = [MPIEXEC, "-q", "--oversubscribe", "-np", str(np), PATTERNS, *map(str, args)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    return p.returncode, p.stdout, p.stderr


def read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return f.read().splitlines()


class TempDirTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="commbench-patterns-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)


class BadInput(TempDirTest):
    def test_a_bad_run_flag_is_one_line_exit_2_and_no_file(self):
        json_path = self.path("out.json")
        code, _, err = run(1, "-n", "0", "--json", json_path)
        self.assertEqual(code, 2, err)
        self.assertIn("-n/--iters", err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertFalse(os.path.exists(json_path))

    def test_bad_model_config_and_layout_are_one_line_exit_2_and_no_file(self):
        not_json = self.path("not.json")
        with open(not_json, "w") as f:
            f.write("{not json")
        negative = self.path("negative.json")
        with open(negative, "w") as f:
            json.dump({"zero_optimization": {"stage": 3, "reduce_bucket_size": -5}}, f)
        cases = [
            (["--preset", "llama-9"], "--preset: unknown preset 'llama-9'; expected one of: llama-3-8b, mistral-7b, "
                                      "llama-3-70b, llama-4-scout"),
            (["--params", "-5"], "--params: must be positive (got -5)"),
            (["--preset", "llama-3-8b", "--layers", "-2"], "--layers: must be at least 1 (got -2)"),
            (["--preset", "llama-3-8b", "--deepspeed-config", not_json],
             f"--deepspeed-config {not_json}: not JSON (byte 3)"),
            (["--preset", "llama-3-8b", "--deepspeed-config", negative],
             f"--deepspeed-config {negative}: zero_optimization.reduce_bucket_size: -5 is negative"),
            (["--preset", "llama-3-8b", "--pattern", "pipeline", "--pp", "8"], "--pp 8: more than the job's 2 ranks"),
            (["--pattern", "bogus"], "--pattern: unknown value 'bogus'"),
            (["--params", "5e6", "--layers", "4", "--compute-ms", "1e20"],
             "--compute-ms, --tflops, --compute-scale: layer 0 forward would compute for 3.33e+16 s, more than an hour"),
            (["--params", "5e6", "--layers", "4", "--tflops", "1e-30"], "--compute-ms, --tflops, --compute-scale: "),
            (["--params", "5e6", "--layers", "4", "--compute-scale", "1e30"], "--compute-ms, --tflops, --compute-scale: "),
        ]
        json_path = self.path("out.json")
        for args, message in cases:
            with self.subTest(args=args):
                # Under mpirun: the first (one line, not one per rank) and the layout judged
                # against the ranks; the others are refused before MPI starts, the same
                # without mpirun (a launch costs a second each).
                if args is cases[0][0] or "--pp" in args:
                    code, out, err = run(2, *args, "--json", json_path)
                else:
                    p = subprocess.run([PATTERNS, *args, "--json", json_path], capture_output=True, text=True,
                                       timeout=60)
                    code, err = p.returncode, p.stderr
                self.assertEqual(code, 2, err)
                lines = err.strip().splitlines()
                self.assertEqual(len(lines), 1, err)  # once, not once per rank
                self.assertTrue(lines[0].startswith("bench-patterns: error: " + message), err)
                self.assertFalse(os.path.exists(json_path))

    def test_buffers_the_node_cannot_hold_are_refused_before_any_is_taken(self):
        # A node with 2 MiB available (COMMBENCH_DEBUG_MEMINFO): every group's buffers, and
        # the MPI library's scratch for the largest reduction, are counted together.
        meminfo = self.path("meminfo")
        with open(meminfo, "w") as f:
            f.write("MemTotal:        8192 kB\nMemAvailable:    2048 kB\n")
        json_path = self.path("out.json")
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   COMMBENCH_DEBUG_MEMINFO=meminfo)
        p = subprocess.run([MPIEXEC, "-q", "--oversubscribe", "-x", "COMMBENCH_DEBUG_MEMINFO", "-np", "4", PATTERNS,
                            "--backend", "mpi", "--pattern", "ddp", *SMALL_MODEL, "--json", json_path],
                           capture_output=True, text=True, timeout=120, env=env)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        lines = p.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertRegex(lines[0], r"^bench-patterns: error: the step's buffers and the library's scratch \(their "
                                   r"sizes follow --params, --layers, --hidden, --seq\) need [0-9.]+MiB per rank x 4 "
                                   r"ranks = [0-9.]+MiB on host \S+, but only 2MiB is available$")
        self.assertFalse(os.path.exists(json_path))

    def test_a_nodes_ranks_are_counted_for_what_each_needs(self):
        # Pipeline stages need different buffers: the node's total is their sum, not the
        # largest rank's need times the ranks.
        meminfo = self.path("meminfo")
        with open(meminfo, "w") as f:
            f.write("MemTotal:        8192 kB\nMemAvailable:    1024 kB\n")
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   COMMBENCH_DEBUG_MEMINFO=meminfo)
        p = subprocess.run([MPIEXEC, "-q", "--oversubscribe", "-x", "COMMBENCH_DEBUG_MEMINFO", "-np", "4", PATTERNS,
                            "--backend", "mpi", "--pattern", "pipeline", "--pp", "2", *SMALL_MODEL],
                           capture_output=True, text=True, timeout=120, env=env)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        match = re.search(r"need up to ([0-9.]+)MiB per rank x 4 ranks = ([0-9.]+)MiB on host", p.stderr)
        self.assertIsNotNone(match, p.stderr)
        largest, total = float(match.group(1)), float(match.group(2))
        self.assertLess(total, 4 * largest - 0.5)
        self.assertGreater(total, largest)

    def test_the_scout_expert_pattern_is_refused_on_a_24_gib_node(self):
        # Its 4 ranks need about 6.2 GiB each (1.9 GiB allreduces: buffers, plus Open MPI's
        # temporary copy); a node with 24 GiB available (COMMBENCH_DEBUG_MEMINFO) used to
        # end in the OOM killer.
        meminfo = self.path("meminfo")
        with open(meminfo, "w") as f:
            f.write(f"MemTotal:       {26 << 20} kB\nMemAvailable:   {24 << 20} kB\n")
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   COMMBENCH_DEBUG_MEMINFO=meminfo)
        p = subprocess.run([MPIEXEC, "-q", "--oversubscribe", "-x", "COMMBENCH_DEBUG_MEMINFO", "-np", "4", PATTERNS,
                            "--backend", "mpi", "--pattern", "ep", "--preset", "llama-4-scout", "--layers", "2"],
                           capture_output=True, text=True, timeout=120, env=env)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertRegex(p.stderr, r"need 6\.[0-9]GiB per rank x 4 ranks = 2[45]\.[0-9]GiB on host \S+, but only "
                                   r"24GiB is available")

    def test_dry_run_needs_a_schedule_file(self):
        code, _, err = run(1, "--dry-run")
        self.assertEqual(code, 2, err)
        self.assertIn("--dump-schedule", err)


class Patterns(TempDirTest):
    # The collective types (op/group) each pattern's step must issue on 4 ranks.
    EXPECTED_TYPES = {
        "ddp": {"allreduce/data"},
        "fsdp": {"allgather/data", "reducescatter/data"},
        "zero1": {"allgather/data", "allreduce/data"},  # buckets allreduced whole, and the gradient norm
        "zero2": {"allgather/data", "allreduce/data"},
        "zero3": {"allgather/data", "reducescatter/data", "allreduce/data"},  # the gradient norm
        "pipeline": {"sendrecv/pipeline"},
        "tp": {"allreduce/tensor"},
        "ep": {"alltoallv/expert", "allreduce/data", "allreduce/expert_data"},
    }
    # ep needs experts, and room for them in the parameter count.
    MODEL = {"ep": ["--params", "20M", "--layers", "4", "--hidden", "256", "--ffn", "1024", "--seq", "128",
                    "--experts", "4", "--top-k", "2"]}

    def test_every_pattern_runs_on_4_ranks(self):
        for pattern in PATTERNS_LIST:
            with self.subTest(pattern=pattern):
                json_path = self.path(pattern + ".json")
                code, out, err = run(4, "--backend", "mpi", "--pattern", pattern, *self.MODEL.get(pattern, SMALL_MODEL),
                                     "--compute-ms", "1", "-n", "2", "-w", "1",
                                     "--json", json_path)
                self.assertEqual(code, 0, err)
                with open(json_path) as f:
                    doc = json.load(f)
                self.assertEqual(doc["schema"], "commbench.patterns/2")
                self.assertIn("provenance", doc)
                self.assertIn(doc["verdict"]["bound"], ["compute-bound", "bandwidth-bound", "latency-bound"])
                self.assertIn("verdict:", out)
                if pattern == "pipeline":
                    # 4 stages; M defaults to 2 x P = 8 micro-batches: (P-1)/(M+P-1) = 3/11.
                    self.assertAlmostEqual(doc["pipeline_bubble"]["ideal"], 3 / 11)
                    self.assertGreater(doc["pipeline_bubble"]["measured"], 0)
                    self.assertIn("pipeline bubble:", out)
                else:
                    self.assertNotIn("pipeline_bubble", doc)
                types = {t["op"] + "/" + t["group"]: t for t in doc["types"]}
                self.assertEqual(set(types), self.EXPECTED_TYPES[pattern])
                for label, row in types.items():
                    self.assertGreater(row["count"], 0, label)
                    self.assertGreater(row["bytes"], 0, label)
                    # Every group but a one-rank one moves bus traffic.
                    if row["group_ranks"] > 1:
                        self.assertGreater(row["busbw_gbps"], 0, label)

    def test_tp_pp_dp_2x2x1_runs_on_sub_communicators(self):
        json_path = self.path("tp-pp.json")
        code, _, err = run(4, "--backend", "mpi", "--pattern", "tp", "--tp", "2", "--pp", "2", "--dp", "1",
                           *SMALL_MODEL, "-n", "2", "--json", json_path)
        self.assertEqual(code, 0, err)
        groups = {t["group"] for t in read_json(json_path)["types"]}
        self.assertIn("tensor", groups)
        self.assertIn("pipeline", groups)

    def test_without_compute_all_communication_is_exposed(self):
        json_path = self.path("zero.json")
        code, _, err = run(4, "--backend", "mpi", "--pattern", "ddp", *SMALL_MODEL, "--compute-ms", "0",
                           "-n", "2", "--json", json_path)
        self.assertEqual(code, 0, err)
        step = read_json(json_path)["mean_step"]
        self.assertAlmostEqual(step["exposed_seconds"], step["step_seconds"], delta=1e-9 + 1e-6 * step["step_seconds"])

    def test_dry_run_writes_the_schedule_and_communicates_nothing(self):
        dump = self.path("schedule.jsonl")
        csv_path = self.path("out.csv")
        code, _, err = run(4, "--pattern", "zero3", *SMALL_MODEL, "--dry-run", "--dump-schedule", dump,
                           "--csv", csv_path)
        self.assertEqual(code, 0, err)
        lines = [json.loads(line) for line in read_lines(dump)]
        self.assertTrue(lines)
        for key in ["op", "bytes", "group", "stream", "phase"]:
            self.assertIn(key, lines[0])
        self.assertFalse(os.path.exists(csv_path))

    def test_trace_has_every_rank_stream_and_collective(self):
        trace_path, dump = self.path("step.trace.json"), self.path("schedule.jsonl")
        code, _, err = run(4, "--backend", "mpi", "--pattern", "tp", "--tp", "2", "--pp", "2", *SMALL_MODEL,
                           "--compute-ms", "1", "-n", "2", "--trace", trace_path, "--dump-schedule", dump)
        self.assertEqual(code, 0, err)
        events = read_json(trace_path)["traceEvents"]
        complete = [e for e in events if e["ph"] == "X"]
        self.assertEqual({e["pid"] for e in complete}, {0, 1, 2, 3})
        for event in complete:
            self.assertGreaterEqual(event["ts"], 0)
            self.assertGreaterEqual(event["dur"], 0)
        # Every collective and peer step of the schedule is one event on its rank's track.
        scheduled = [json.loads(line) for line in read_lines(dump)]
        for rank in range(4):
            communication = [e for e in complete if e["pid"] == rank and e["cat"] != "compute"]
            self.assertEqual(len(communication),
                             len([s for s in scheduled if s["rank"] == rank and s["kind"] != "compute"]), rank)
        threads = {e["args"]["name"] for e in events if e["name"] == "thread_name"}
        self.assertTrue({"compute", "tensor", "pipeline"} <= threads, threads)

    def test_csv_has_a_row_per_type_and_per_step(self):
        csv_path = self.path("out.csv")
        code, _, err = run(2, "--backend", "mpi", "--pattern", "ddp", *SMALL_MODEL, "-n", "3",
                           "--csv", csv_path)
        self.assertEqual(code, 0, err)
        rows = list(csv.DictReader(read_lines(csv_path)))
        self.assertEqual(sum(1 for r in rows if r["record"] == "step"), 3)
        self.assertTrue(any(r["record"] == "type" for r in rows))


class Overlap(TempDirTest):
    """How much communication compute hides: a judgement of speed (ctest label speed, run
    alone); that every pattern runs and moves its bytes is Patterns'."""

    def test_compute_far_longer_than_communication_hides_it(self):
        # FSDP prefetches the next unit's all-gather and reduce-scatters each unit's
        # gradients while the previous unit's backward runs: what cannot overlap is the first
        # all-gather and the last reduce-scatter (7 ms here when quiet, near 30 ms under
        # CI's load), so 150 ms of compute per layer keeps them far under a tenth.
        json_path = self.path("hidden.json")
        code, _, err = run(2, "--backend", "mpi", "--pattern", "fsdp", *SMALL_MODEL, "--compute-ms", "150", "-n", "2",
                           "-w", "1", "--json", json_path)
        self.assertEqual(code, 0, err)
        with open(json_path) as f:
            step = json.load(f)["mean_step"]
        self.assertGreater(step["communication_seconds"], 0)
        self.assertLess(step["exposed_seconds"], 0.10 * step["step_seconds"], step)


if __name__ == "__main__":
    unittest.main()
