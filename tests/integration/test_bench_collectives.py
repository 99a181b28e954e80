"""Integration tests: real mpirun processes running bench-collectives with the MPI backend.

Every assertion is on values: exit codes, parsed CSV/JSON, the busbw factors, messages.
Run by ctest (see CMakeLists.txt), which passes the binary and mpiexec via environment.
"""
import csv
import glob
import io
import json
import math
import os
import re
import shutil
import signal
import stat
import subprocess
import tempfile
import time
import unittest

from process_helpers import alive, children_of, run_stalled

BIN = os.environ.get("COMMBENCH_BENCH_COLLECTIVES", "build/bench/bench-collectives")
MPIEXEC = os.environ.get("COMMBENCH_MPIEXEC", "mpirun")
TIMEOUT_S = 240

COLUMNS = ("backend,op,placement,dtype,redop,root,bytes,count,ranks,nodes,iterations,samples,time_us,"
           "time_min_us,time_mean_us,p50_us,p99_us,noise,slowest_rank,slowest_host,algbw_gbps,busbw_gbps,"
           "theoretical_busbw_gbps,achievable_busbw_gbps,efficiency,wrong,threshold,stop_reason,nccl_algo,nccl_proto,"
           "nccl_channels,nccl_split,model_algo").split(",")
ELEMENT_SIZE = {"int8": 1, "uint8": 1, "int32": 4, "uint32": 4, "int64": 8, "uint64": 8, "float": 4, "double": 8}
REDUCING = {"allreduce", "reducescatter", "reduce"}
CHUNKED = {"allgather", "reducescatter", "alltoall"}


def run(np, *args, timeout=TIMEOUT_S):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    cmd = [MPIEXEC, "-q", "--oversubscribe", "-np", str(np), BIN, *map(str, args)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    return p.returncode, p.stdout, p.stderr


def bus_factor(op, n):
    if op == "allreduce":
        return 2.0 * (n - 1) / n
    if op in CHUNKED:
        return (n - 1) / n
    return 1.0


def expected_shapes(op, dtype, sizes, n):
    """Independent re-statement of the size rounding: whole elements, whole chunks, >= 1 per rank."""
    esize = ELEMENT_SIZE[dtype]
    chunks = n if op in CHUNKED else 1
    shapes = []
    for size in sizes:
        count = max(1, size // esize // chunks)
        total = count * chunks * esize
        if not shapes or shapes[-1] != total:
            shapes.append(total)
    return shapes


def geometric(lo, hi, factor):
    sizes, s = [], lo
    while s <= hi:
        sizes.append(s)
        s *= factor
    return sizes


class TempDirTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="commbench-it-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)


class CorrectnessSweep(TempDirTest):
    """Every collective, several types and reductions, both placements, on 1, 2 and 4 ranks."""

    DTYPES = ["float", "int32", "uint8", "double"]
    REDOPS = ["sum", "prod", "min", "max"]

    def sweep(self, np):
        csv_path, json_path = self.path(f"np{np}.csv"), self.path(f"np{np}.json")
        rc, out, err = run(np, "--op", "all", "--check", "-d", ",".join(self.DTYPES), "-o", ",".join(self.REDOPS),
                           "--placement", "both", "-b", "8", "-e", "64K", "-f", "8", "-n", "3", "-w", "1",
                           "-r", str(np - 1), "--csv", csv_path, "--json", json_path)
        self.assertEqual(rc, 0, err)
        self.assertEqual(err.strip(), "")
        with open(csv_path, newline="") as f:
            reader = csv.DictReader(f)
            self.assertEqual(reader.fieldnames, COLUMNS)
            rows = list(reader)
        with open(json_path) as f:
            doc = json.load(f)

        sizes = geometric(8, 64 * 1024, 8)
        expected_rows = 0
        for op in ["allreduce", "allgather", "reducescatter", "broadcast", "reduce", "alltoall", "sendrecv"]:
            redops = len(self.REDOPS) if op in REDUCING else 1
            for dtype in self.DTYPES:
                shapes = expected_shapes(op, dtype, sizes, np)
                expected_rows += redops * len(shapes) * 2
                got = sorted({int(r["bytes"]) for r in rows if r["op"] == op and r["dtype"] == dtype})
                self.assertEqual(got, shapes, f"{op} {dtype}")
        self.assertEqual(len(rows), expected_rows)

        for r in rows:
            where = f"{r['op']} {r['dtype']} {r['redop']} {r['bytes']} {r['placement']}"
            self.assertEqual(r["wrong"], "0", where)
            self.assertEqual(r["backend"], "mpi")
            self.assertEqual(int(r["ranks"]), np)
            self.assertEqual(int(r["nodes"]), 1)
            self.assertEqual(int(r["iterations"]), 3)
            self.assertEqual(r["stop_reason"], "fixed_count", where)  # -n 3
            self.assertEqual(r["theoretical_busbw_gbps"], "")
            self.assertEqual(r["achievable_busbw_gbps"], "")
            self.assertEqual(r["efficiency"], "")
            self.assertEqual(r["model_algo"], "")  # no bound, no algorithm it is for
            self.assertEqual(r["root"], str(np - 1) if r["op"] in ("broadcast", "reduce") else "")
            self.assertEqual(r["redop"] != "", r["op"] in REDUCING, where)
            time_us, algbw, busbw = float(r["time_us"]), float(r["algbw_gbps"]), float(r["busbw_gbps"])
            self.assertGreater(time_us, 0, where)
            self.assertTrue(math.isclose(algbw, int(r["bytes"]) / time_us / 1e3, rel_tol=1e-6), where)
            self.assertTrue(math.isclose(busbw, algbw * bus_factor(r["op"], np), rel_tol=1e-6, abs_tol=1e-12), where)
            self.assertLessEqual(float(r["time_min_us"]), float(r["time_mean_us"]) * (1 + 1e-6))
            self.assertLessEqual(float(r["time_mean_us"]), time_us * (1 + 1e-6))
            self.assertIn(int(r["slowest_rank"]), range(np))

        self.assertEqual(doc["schema"], "commbench.collectives/2")
        self.assertTrue(doc["complete"])
        self.assertEqual(doc["provenance"]["ranks"], np)
        self.assertEqual(len(doc["provenance"]["rank_hosts"]), np)
        self.assertIn("--check", doc["provenance"]["command_line"])
        self.assertTrue(doc["provenance"]["mpi_version"].startswith("Open MPI"))
        self.assertEqual(len(doc["rows"]), len(rows))
        for jrow, crow in zip(doc["rows"], rows):
            self.assertEqual(list(jrow.keys()), COLUMNS)
            self.assertEqual((jrow["op"], jrow["bytes"], jrow["wrong"]), (crow["op"], int(crow["bytes"]), 0))
            self.assertTrue(math.isclose(jrow["busbw_gbps"], float(crow["busbw_gbps"]), rel_tol=1e-6, abs_tol=1e-12))
        self.assertEqual(doc["summary"]["rows"], len(rows))
        self.assertEqual(doc["summary"]["wrong_elements"], 0)

    def test_one_rank(self):
        self.sweep(1)

    def test_two_ranks(self):
        self.sweep(2)

    def test_four_ranks(self):
        self.sweep(4)

    def test_every_host_type_with_all(self):
        # "-d all" / "-o all" keep what MPI can do and say what was skipped.
        rc, out, err = run(2, "--op", "allreduce,reduce", "-d", "all", "-o", "all", "-c", "-b", "64", "-e", "64",
                           "-n", "2", "--format", "csv")
        self.assertEqual(rc, 0, err)
        rows = list(csv.DictReader(io.StringIO(out)))
        self.assertEqual({r["dtype"] for r in rows}, set(ELEMENT_SIZE))
        self.assertEqual({r["redop"] for r in rows}, {"sum", "prod", "min", "max"})
        self.assertEqual(len(rows), 2 * 8 * 4)
        self.assertTrue(all(r["wrong"] == "0" for r in rows))
        rc, out, err = run(2, "--op", "allreduce", "-d", "all", "-o", "all", "-b", "64", "-e", "64", "-n", "2")
        self.assertEqual(rc, 0, err)
        self.assertIn("# note: skipped half: the mpi backend cannot use -d/--dtype half", out)
        self.assertIn("# note: skipped avg: the mpi backend cannot use -o/--redop avg", out)


class OutputsAndModes(TempDirTest):
    def test_every_row_says_why_its_measurement_stopped(self):
        csv_path = self.path("adaptive.csv")
        # A noise target no real run meets within 0.05 s: every size stops on time.
        rc, out, err = run(2, "--op", "allreduce", "-b", "8", "-e", "1K", "-f", "32", "--target-noise", "0.000001",
                           "--max-time-per-size", "0.05", "--min-samples", "3", "--csv", csv_path)
        self.assertEqual(rc, 0, err)
        with open(csv_path, newline="") as f:
            rows = list(csv.DictReader(f))
        self.assertEqual([r["bytes"] for r in rows], ["8", "256"])
        self.assertEqual({r["stop_reason"] for r in rows}, {"time_limit"})
        # A target nearly every run meets at the floor (the relative standard error of a mean
        # of 3 positive samples is at most 100 %; it nears that only when two samples are
        # near 0 beside the third, as a loaded machine can make them): the sample floor is
        # kept, then the noise target stops every size.
        rc, out, err = run(2, "--op", "allreduce", "-b", "8", "-e", "1K", "-f", "32", "--target-noise", "99.9",
                           "--min-samples", "3", "--csv", csv_path, "--force")
        self.assertEqual(rc, 0, err)
        with open(csv_path, newline="") as f:
            rows = list(csv.DictReader(f))
        self.assertEqual({r["stop_reason"] for r in rows}, {"noise_target"})
        self.assertTrue(all(int(r["samples"]) >= 3 for r in rows), rows)

    def test_console_table_has_header_rows_and_summary(self):
        rc, out, err = run(2, "--op", "allreduce,broadcast", "-b", "1K", "-e", "4K", "-n", "5", "-c")
        self.assertEqual(rc, 0, err)
        lines = out.splitlines()
        self.assertTrue(lines[0].startswith("# bench-collectives "), lines[0])
        self.assertIn("# backend: mpi (Open MPI", out)
        self.assertIn("# ranks: 2  nodes: 1", out)
        data = [l.split() for l in lines if not l.startswith("#")]
        self.assertEqual([(d[0], d[5]) for d in data],
                         [("allreduce", "1024"), ("allreduce", "2048"), ("allreduce", "4096"),
                          ("broadcast", "1024"), ("broadcast", "2048"), ("broadcast", "4096")])
        self.assertTrue(all(d[-2:] == ["0", "-"] for d in data))  # wrong, no threshold verdict
        self.assertIn("# rows: 6  wrong elements: 0  complete: yes", out)
        # MPI chooses no algorithm NCCL's way: the nccl_* columns are empty, and say why.
        self.assertIn("# note: nccl_algo, nccl_proto, nccl_channels: empty, the mpi backend reports no algorithm "
                      "choice (NCCL's profiler plugin interface does)", out)
        # Two host ranks on one node: the bandwidth model says why it has no figure.
        self.assertIn("# note: theoretical busbw of allreduce: unknown; intra-node bandwidth unknown: ranks on one "
                      "node exchange through shared memory, which has no spec bandwidth", out)

    def test_one_rank_model_says_busbw_is_zero_by_definition(self):
        rc, out, err = run(1, "--op", "broadcast", "-b", "1K", "-e", "1K", "-n", "2", "--format", "json")
        self.assertEqual(rc, 0, err)
        notes = json.loads(out)["provenance"]["notes"]
        self.assertIn("theoretical busbw of broadcast: unknown; one rank: nothing crosses a link "
                      "(busbw is 0 by definition)", notes)

    def test_stdout_json_and_csv_agree(self):
        args = ["--op", "allgather", "-b", "256", "-e", "1K", "-n", "4"]
        rc, out_json, err = run(2, *args, "--format", "json")
        self.assertEqual(rc, 0, err)
        doc = json.loads(out_json)
        self.assertEqual([r["bytes"] for r in doc["rows"]], [256, 512, 1024])
        self.assertEqual([r["iterations"] for r in doc["rows"]], [4, 4, 4])
        self.assertIsNone(doc["rows"][0]["wrong"])  # not checked
        rc, out_csv, err = run(2, *args, "--format", "csv")
        self.assertEqual(rc, 0, err)
        self.assertEqual([int(r["bytes"]) for r in csv.DictReader(io.StringIO(out_csv))], [256, 512, 1024])

    def test_adaptive_mode_meets_its_floor(self):
        rc, out, err = run(2, "--op", "allreduce", "-b", "4K", "-e", "16K", "--max-time-per-size", "0.2",
                           "--min-samples", "7", "--format", "csv")
        self.assertEqual(rc, 0, err)
        for r in csv.DictReader(io.StringIO(out)):
            self.assertGreaterEqual(int(r["samples"]), 7)
            self.assertGreaterEqual(int(r["iterations"]), int(r["samples"]))
            self.assertGreater(float(r["noise"]), 0)
            self.assertLessEqual(float(r["p50_us"]), float(r["p99_us"]))

    def test_linear_steps(self):
        rc, out, err = run(1, "--op", "broadcast", "-b", "1K", "-e", "4K", "-i", "1K", "-n", "1", "--format", "csv")
        self.assertEqual(rc, 0, err)
        self.assertEqual([int(r["bytes"]) for r in csv.DictReader(io.StringIO(out))], [1024, 2048, 3072, 4096])

    def test_existing_file_needs_force(self):
        target = self.path("rows.csv")
        with open(target, "w") as f:
            f.write("precious\n")
        rc, out, err = run(2, "--op", "allreduce", "-b", "8", "-e", "8", "-n", "1", "--csv", target)
        self.assertEqual(rc, 2)
        self.assertEqual(err.strip(), f"bench-collectives: error: --csv {target}: file exists; pass --force to overwrite it")
        with open(target) as f:
            self.assertEqual(f.read(), "precious\n")
        rc, out, err = run(2, "--op", "allreduce", "-b", "8", "-e", "8", "-n", "1", "--csv", target, "--force")
        self.assertEqual(rc, 0, err)
        with open(target) as f:
            self.assertEqual(f.readline().strip().split(","), COLUMNS)

    def test_only_the_reporting_rank_asks_its_file_system(self):
        # Two ranks whose working directories differ, as on two nodes: the file exists
        # only where rank 1 runs. Rank 1 never writes it, so it must not refuse the run
        # (it used to exit 2 alone, silently, and the launcher ended the job).
        node_a, node_b = self.path("node-a"), self.path("node-b")
        os.makedirs(node_a)
        os.makedirs(node_b)
        with open(os.path.join(node_b, "rows.csv"), "w") as f:
            f.write("rank 1's node\n")
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        args = [BIN, "--op", "allreduce", "-b", "8", "-e", "8", "-n", "1", "--csv", "rows.csv"]
        p = subprocess.run([MPIEXEC, "-q", "--oversubscribe", "-np", "1", "-wdir", node_a, *args, ":",
                            "-np", "1", "-wdir", node_b, *args], capture_output=True, text=True, timeout=TIMEOUT_S,
                           env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(node_a, "rows.csv")) as f:
            self.assertEqual(f.readline().strip().split(","), COLUMNS)
        with open(os.path.join(node_b, "rows.csv")) as f:
            self.assertEqual(f.read(), "rank 1's node\n")

    def test_help_prints_once(self):
        rc, out, err = run(2, "--help")
        self.assertEqual(rc, 0)
        self.assertEqual(out.count("--max-bytes"), 1)


class Failures(TempDirTest):
    def test_corrupted_output_fails_the_check_naming_op_size_and_rank(self):
        csv_path = self.path("rows.csv")
        rc, out, err = run(2, "--op", "allreduce", "-b", "1K", "-e", "2K", "-n", "2", "-c", "--debug-corrupt-rank", "1",
                           "--csv", csv_path)
        self.assertEqual(rc, 1, err)
        lines = err.strip().splitlines()
        self.assertEqual(lines, [
            "bench-collectives: error: check failed: allreduce 1KiB float sum out-of-place: "
            "1 wrong elements, first on rank 1 (host " + lines[0].split("(host ")[1],
            "bench-collectives: error: check failed: allreduce 2KiB float sum out-of-place: "
            "1 wrong elements, first on rank 1 (host " + lines[1].split("(host ")[1],
        ])
        with open(csv_path) as f:
            self.assertEqual([r["wrong"] for r in csv.DictReader(f)], ["1", "1"])

    def test_json_that_cannot_be_written_at_the_end_exits_3_cleanly(self):
        # The JSON's directory disappears while the sweep runs: every rank agrees on the
        # failure, so the job ends with one line and exit 3, not an MPI abort.
        csv_path, json_dir = self.path("rows.csv"), self.path("gone")
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        proc = subprocess.Popen([MPIEXEC, "-q", "--oversubscribe", "-np", "2", BIN, "--op", "allreduce", "-b", "8",
                                 "-e", "64K", "-n", "2000", "--csv", csv_path, "--json", json_dir + "/out.json"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        deadline = time.time() + 30
        while line_count(csv_path) < 1 and time.time() < deadline:
            time.sleep(0.02)
        shutil.rmtree(json_dir)
        out, err = proc.communicate(timeout=120)
        self.assertEqual(proc.returncode, 3, err)
        self.assertEqual(err.splitlines(), [f"bench-collectives: error: --json {json_dir}/out.json: cannot create a "
                                            "temporary file beside it: No such file or directory"])
        self.assertEqual(line_count(csv_path), 1 + 14)  # every row is still in the CSV

    def test_timeout_exits_4_naming_rank_host_and_step(self):
        rc, out, err = run(2, "--op", "allreduce", "-b", "64M", "-e", "64M", "-n", "3", "-T", "0.001")
        self.assertEqual(rc, 4, err)
        # The first guarded step that outlasts 1 ms ends the job: usually joining the ranks
        # right after MPI_Init (StallInEveryPhase covers each phase by name).
        self.assertRegex(err, r"bench-collectives: timeout: rank [01] \(host [^)]+\): "
                              r"(joining the job's ranks|opening the heartbeat channel|"
                              r"creating the auto backend|allocating the buffers|"
                              r"probing the topology for the bandwidth model|"
                              r"allreduce 64MiB float sum out-of-place \([a-z -]+, \d+ iterations\)) "
                              r"did not complete within 0\.001 s")


# (arguments, text the single error line must contain). Each must exit 2, print one line,
# and leave no result file behind.
BAD_INPUTS = [
    (["--soak", "soon"], "--soak: 'soon' is not a length of time (like 90s, 20m, 2h)"),
    (["--soak", "0"], "--soak: must be more than 0 and at most a year (got 0)"),
    (["--soak-interval", "5"], "--soak-interval: applies to --soak only"),
    (["-b", "1M", "-e", "1K"], "-b/--min-bytes: 1MiB is larger than -e/--max-bytes 1KiB"),
    (["-b", "0"], "-b/--min-bytes: '0' is zero"),
    (["-e", "-64"], "-e/--max-bytes: '-64' is negative"),
    (["-e", "12XB"], "-e/--max-bytes: '12XB' has an unknown unit"),
    (["-b", "eight"], "-b/--min-bytes: 'eight' is not a size"),
    (["-e", "99999999999999999999"], "-e/--max-bytes: '99999999999999999999' is too large"),
    (["-e", "20000000T"], "-e/--max-bytes: '20000000T' is too large"),
    (["-f", "1"], "-f/--step-factor: must be greater than 1"),
    (["-f", "0.5"], "-f/--step-factor: must be greater than 1"),
    (["-i", "1", "-b", "1", "-e", "1G"], "-i/--step-bytes: the sweep would visit more than 100000 sizes"),
    (["--op", "allreduce,gather"], "--op: unknown value 'gather'"),
    (["--op", "alltoallv", "--alltoallv-distribution", "zipf"], "--alltoallv-distribution: 'zipf' needs a parameter"),
    (["--op", "alltoallv", "--alltoallv-distribution", "hot:1.5"],
     "--alltoallv-distribution: 'hot:1.5' has a fraction outside 0..1"),
    (["--op", "alltoall", "--alltoallv-distribution", "hot:0.5"],
     "--alltoallv-distribution: applies to alltoallv only, which --op does not name"),
    (["-d", "float8"], "-d/--dtype: unknown value 'float8'"),
    (["-o", "xor"], "-o/--redop: unknown value 'xor'"),
    (["-r", "2"], "-r/--root: 2 is outside [0, 2)"),
    (["-r", "-1"], "-r/--root: must be at least 0"),
    (["-d", "half"], "the mpi backend cannot use -d/--dtype half"),
    (["-d", "bfloat16"], "the mpi backend cannot use -d/--dtype bfloat16"),
    (["-o", "avg"], "the mpi backend cannot use -o/--redop avg"),
    (["-e", "1T"], "-e/--max-bytes: 2147483648 elements exceed the 2^31-1 element count of an MPI call"),
    (["--op", "allreduce", "-d", "double", "-e", "15G"], "-e/--max-bytes: the buffers and the library's scratch need 24GiB per rank x 2 ranks = 48GiB on host"),
    (["-n", "0"], "-n/--iters: must be at least 1"),
    (["-c", "5"], "-c/--check: expected 0 or 1"),
    (["-T", "soon"], "-T/--timeout: 'soon' is not a number"),
    (["--backend", "shmem"], "--backend: unknown value 'shmem'"),
    (["--placement", "both,in"], "--placement: unknown value 'both,in'"),
    (["--format", "yaml"], "--format: unknown value 'yaml'"),
    (["--target-noise", "-1"], "--target-noise: must be a percentage"),
    (["--max-time-per-size", "0"], "--max-time-per-size: must be a positive number"),
    (["-f", "2", "-i", "4K"], "excludes"),
    (["--bogus"], "--bogus"),
    (["-g", "0"], "-g/--gpus-per-process: must be at least 1"),
    (["-z", "3"], "-z/--blocking: expected 0 or 1"),
    (["-G", "-1"], "-G/--cuda-graph: must be at least 0"),
    (["-d", "f8e4m3"], "the mpi backend cannot use -d/--dtype f8e4m3"),
    (["-n", "99999999999999999999"], "-n/--iters: '99999999999999999999' is not a whole number"),
    (["--max-time-per-size", "nan"], "--max-time-per-size: 'nan' is not a number"),
    (["--target-noise", "abc%"], "--target-noise: 'abc%' is not a number"),
    (["-d", ""], "-d/--dtype: empty item in list ''"),
    (["--op", ",,"], "--op: empty item in list ',,'"),
    (["-e", "1K\x1b[31m"], "-e/--max-bytes: '1K\\x1b[31m' has an unknown unit"),
    (["--batch-time", "0"], "--batch-time: must be a positive number of seconds"),
    (["--min-samples", "-3"], "--min-samples: must be at least 1"),
]


def line_count(path):
    try:
        with open(path) as f:
            return f.read().count("\n")
    except OSError:
        return 0


class Interruption(TempDirTest):
    """SIGTERM/SIGINT mid-sweep: finished rows survive, JSON says incomplete, no orphans."""

    def interrupt(self, sig, target):
        csv_path, json_path = self.path("rows.csv"), self.path("rows.json")
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        proc = subprocess.Popen([MPIEXEC, "-q", "--oversubscribe", "-np", "4", BIN, "--op", "allreduce,allgather",
                                 "-b", "8", "-e", "64M", "--csv", csv_path, "--json", json_path, "--format", "csv"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        deadline = time.time() + 60
        while time.time() < deadline:  # wait until some rows are on disk
            if line_count(csv_path) >= 4:
                break
            time.sleep(0.1)
        ranks = children_of(proc.pid)
        self.assertEqual(len(ranks), 4)
        for pid in (ranks if target == "ranks" else [proc.pid]):
            os.kill(pid, sig)
        out, err = proc.communicate(timeout=60)
        # A signalled mpirun may return a moment before its ranks have written their
        # results and exited; they must all be gone within a few seconds (no orphans).
        deadline = time.time() + 10
        while any(alive(pid) for pid in ranks) and time.time() < deadline:
            time.sleep(0.1)
        for pid in ranks:
            self.assertFalse(alive(pid), f"rank process {pid} outlived the job by 10 s")
        with open(csv_path, newline="") as f:
            rows = list(csv.DictReader(f))
        self.assertGreaterEqual(len(rows), 3)
        for r in rows:  # every line whole: all columns, numbers parse
            self.assertEqual(len(r), len(COLUMNS))
            self.assertIsNone(r.get(None))
            float(r["busbw_gbps"])
        with open(json_path) as f:
            doc = json.load(f)
        self.assertFalse(doc["complete"])
        self.assertEqual(len(doc["rows"]), len(rows))
        self.assertEqual(doc["summary"]["exit_code"], 128 + sig)
        self.assertEqual(glob.glob(json_path + ".tmp*"), [])
        name = "SIGTERM" if sig == signal.SIGTERM else "SIGINT"
        self.assertIn(f"bench-collectives: error: interrupted by {name}; rows measured so far are kept", err)
        return proc.returncode

    def test_sigterm_to_the_ranks_as_slurm_sends_it(self):
        self.assertEqual(self.interrupt(signal.SIGTERM, "ranks"), 143)

    def test_sigint_to_the_ranks(self):
        self.assertEqual(self.interrupt(signal.SIGINT, "ranks"), 130)

    def test_sigterm_to_mpirun(self):
        # mpirun forwards the signal and reports its own failure status (1).
        self.assertNotEqual(self.interrupt(signal.SIGTERM, "mpirun"), 0)


def rank_pid(mpirun_pid, rank):
    for pid in children_of(mpirun_pid):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = dict(v.split(b"=", 1) for v in f.read().split(b"\0") if b"=" in v)
        except OSError:
            continue
        if env.get(b"OMPI_COMM_WORLD_RANK") == str(rank).encode():
            return pid
    return None


class FaultInjection(TempDirTest):
    """A rank that stops or dies mid-sweep: the job ends within timeout + 10 s, names it."""

    TIMEOUT_S = 5

    def start(self, quiet=True):
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        cmd = [MPIEXEC, *(["-q"] if quiet else []), "--oversubscribe", "-np", "4", BIN, "--op", "allreduce", "-b", "8",
               "-e", "64M", "-T", str(self.TIMEOUT_S), "--csv", self.path("rows.csv")]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        deadline = time.time() + 60
        while time.time() < deadline:  # mid-sweep: some rows are out
            if line_count(self.path("rows.csv")) >= 3:
                break
            time.sleep(0.1)
        pids = children_of(proc.pid)
        victim = rank_pid(proc.pid, 2)
        self.assertIsNotNone(victim)
        return proc, pids, victim

    def finish(self, proc, pids, hit_at):
        out, err = proc.communicate(timeout=self.TIMEOUT_S + 30)
        elapsed = time.time() - hit_at
        self.assertLessEqual(elapsed, self.TIMEOUT_S + 10, err)
        deadline = time.time() + 10
        while any(alive(pid) for pid in pids) and time.time() < deadline:
            time.sleep(0.1)
        self.assertFalse(any(alive(pid) for pid in pids), "orphan rank processes")
        return err

    def test_stopped_rank_is_named_and_the_job_exits_4(self):
        proc, pids, victim = self.start()
        os.kill(victim, signal.SIGSTOP)
        err = self.finish(proc, pids, time.time())
        self.assertEqual(proc.returncode, 4, err)
        self.assertRegex(err, r"bench-collectives: timeout: rank 0 \(host [^)]+\): .* did not complete within 5 s "
                              r"\(-T/--timeout\); not responding: rank 2 \(host [^)]+\) "
                              r"(silent for|never reported)")  # stopped before its first heartbeat arrived
        self.assertNotRegex(err, r"not responding: .*rank [013] \(")

    def test_killed_rank_ends_the_job_and_is_named(self):
        proc, pids, victim = self.start(quiet=False)  # without -q mpirun says who died
        os.kill(victim, signal.SIGKILL)
        err = self.finish(proc, pids, time.time())
        self.assertNotEqual(proc.returncode, 0, err)
        self.assertRegex(err, r"process rank 2 .* exited on signal 9")


class StallInEveryPhase(TempDirTest):
    """Issue 13: a rank that stalls in any phase, from joining the ranks to finalizing MPI, ends
    the job within timeout + 10 s with exit 4 and a line naming the phase; once the
    heartbeat channel is open, rank 0 also names the stalled rank. COMMBENCH_DEBUG_STALL
    makes rank 1 stop itself (SIGSTOP) at the first guarded step whose name contains the
    given text, so every phase the hook can reach is one the watchdog covers."""

    # Long enough that no healthy step (MPI start-up under ASan on a loaded 2-core VM)
    # outlasts it, short enough to keep 16 phases near 100 s.
    TIMEOUT_S = 4
    # (text of the guarded step, how rank 0 names the stalled rank: its arrival census
    # before the heartbeat channel exists, the heartbeats afterwards)
    PHASES = [("joining the job's ranks", "census"), ("opening the heartbeat channel", "census")] + [
        (phase, "heartbeat") for phase in (
            "creating the auto backend", "exchanging each rank's GPUs", "planning the sweep", "allocating the buffers",
            "probing the topology for the bandwidth model", "opening the result files",
            "gathering each rank's devices", "writing the result headers", "(check)", "(timed batch",
            "(stop agreement)", "writing the results", "finalizing MPI")]
    # Every waiting rank also names itself and the phase (docs/methodology.md, "Timeouts").

    def stall(self, phase):
        cmd = [MPIEXEC, "-q", "--oversubscribe", "-np", "3", BIN, "--op", "allreduce", "-b", "8", "-e", "1K",
               "-n", "3", "-c", "-T", str(self.TIMEOUT_S), "--json", self.path("out.json"), "--force"]
        return run_stalled(cmd, phase, self.TIMEOUT_S)

    def test_a_rank_stalled_in_any_phase_is_reported_with_exit_4(self):
        for phase, how_named in self.PHASES:
            with self.subTest(phase=phase):
                rc, err, elapsed, ranks = self.stall(phase)
                self.assertIn("rank 1 stops itself at", err)  # the hook fired in this phase
                self.assertEqual(rc, 4, err)
                self.assertLessEqual(elapsed, self.TIMEOUT_S + 10, err)
                self.assertTrue(ranks, "no rank process seen")
                self.assertFalse(any(alive(pid) for pid in ranks), "orphan rank processes")
                waiting = [line for line in err.splitlines() if re.match(
                    r"bench-collectives: timeout: rank [02] \(host [^)]+\): .*" + re.escape(phase) +
                    r".* did not complete within 4 s \(-T/--timeout\)", line)]
                self.assertTrue(waiting, err)
                if how_named == "census":
                    # Before the ranks exchanged names, rank 0 cannot know the host.
                    host = "unknown" if phase.startswith("joining") else "[^)]+"
                    self.assertRegex(err, r"(?m)^bench-collectives: timeout: rank 0 \(host [^)]+\): " + re.escape(phase) +
                                     r" did not complete .*; not arrived at " + re.escape(phase) +
                                     r": rank 1 \(host " + host + r"\)$")
                else:
                    self.assertRegex(err, r"bench-collectives: timeout: rank 0 \(host [^)]+\): .*not responding: "
                                          r"rank 1 \(host [^)]+\) (silent for|never reported)")
                    self.assertNotRegex(err, r"not responding: .*rank [02] \(")
                # The JSON is whole or absent, and no temporary file is left beside it:
                # written by the reporting rank at the end, or, once its header was
                # written, closed by the timeout with complete: false and exit code 4.
                if os.path.exists(self.path("out.json")):
                    with open(self.path("out.json")) as f:
                        doc = json.load(f)
                    finished = phase in ("writing the results", "finalizing MPI")
                    self.assertEqual(doc["complete"], finished)
                    self.assertEqual(doc["summary"]["exit_code"], 0 if finished else 4)
                self.assertEqual([name for name in os.listdir(self.dir) if ".tmp." in name], [])

    def test_a_rank_stopped_before_mpi_init_returns_ends_the_job_with_exit_4(self):
        # MPI start-up gets at least 5 s whatever -T says; every rank waiting in it names
        # itself, its host and the phase.
        rc, err, elapsed, ranks = self.stall("starting MPI")
        self.assertIn("rank 1 stops itself at 'starting MPI (MPI_Init)'", err)
        self.assertEqual(rc, 4, err)
        self.assertLessEqual(elapsed, max(self.TIMEOUT_S, 5) + 10, err)
        self.assertTrue(ranks, "no rank process seen")
        self.assertFalse(any(alive(pid) for pid in ranks), "orphan rank processes")
        for rank in (0, 2):
            self.assertRegex(err, rf"(?m)^bench-collectives: timeout: rank {rank} \(host [^)]+\): starting MPI "
                                  r"\(MPI_Init\) did not complete within 5 s \(-T/--timeout 4, raised for this step\)")
        self.assertFalse(os.path.exists(self.path("out.json")))


def built_backends():
    out = subprocess.run([BIN, "--version"], capture_output=True, text=True, check=True).stdout
    line = [l for l in out.splitlines() if l.startswith("backends: ")][0]
    return line[len("backends: "):].split(", ")


def monitored_traffic(prof_files):
    """What Open MPI's pml monitoring saw each rank send each peer, every message counted
    (the collectives' own included): {(from, to): [bytes, messages, size histogram]}."""
    traffic = {}
    for name in prof_files:
        with open(name) as prof:
            for line in prof:
                fields = line.rstrip("\n").split("\t")
                if fields[0] not in ("E", "I") or len(fields) < 5:
                    continue
                entry = traffic.setdefault((int(fields[1]), int(fields[2])), [0, 0, None])
                entry[0] += int(fields[3].split()[0])
                entry[1] += int(fields[4].split()[0])
                if len(fields) > 5:
                    entry[2] = fields[5]
    return traffic


class SymmetricControlPlane(TempDirTest):
    """On 2 ranks bench-collectives' own traffic (set-up, agreements, the arrival census)
    sends each rank as many messages and bytes, of the same sizes, as it receives: one-way
    messages before a small-message loop leave Open MPI's shared-memory fast boxes in the
    slower of two steady states (docs/methodology.md). Counted by Open MPI's own pml
    monitoring component, which sees the messages collectives send inside the library."""

    def test_both_directions_carry_the_same_messages(self):
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        prefix = self.path("monitor")
        # A symmetric operation, so every difference is the harness's own; --check adds
        # its agreements, the default --timeout the census and the heartbeat set-up.
        cmd = [MPIEXEC, "-q", "--oversubscribe", "--mca", "pml_monitoring_enable", "2",
               "--mca", "pml_monitoring_enable_output", "3", "--mca", "pml_monitoring_filename", prefix,
               "-np", "2", BIN, "--backend", "mpi", "--op", "allgather", "-b", "8", "-e", "1K", "--check",
               "--format", "csv"]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, env=env)
        profiles = sorted(glob.glob(prefix + ".*.prof"))
        if p.returncode != 0 and not profiles and "monitoring" in p.stderr:
            self.skipTest("this MPI has no pml monitoring component: " + p.stderr.strip().splitlines()[-1])
        self.assertEqual(p.returncode, 0, p.stderr)
        if not profiles:
            self.skipTest("this MPI wrote no pml monitoring profile (not Open MPI, or built without it)")
        traffic = monitored_traffic(profiles)
        self.assertIn((0, 1), traffic, traffic)
        self.assertIn((1, 0), traffic, traffic)
        there, back = traffic[(0, 1)], traffic[(1, 0)]
        self.assertGreater(there[1], 100, "the sweep's own allgathers were not counted")
        self.assertEqual(there[1], back[1], f"messages 0->1 {there[1]}, 1->0 {back[1]}")
        self.assertEqual(there[0], back[0], f"bytes 0->1 {there[0]}, 1->0 {back[0]}")
        self.assertEqual(there[2], back[2], "message size histograms differ")


class BackendSelection(TempDirTest):
    """What a machine without GPUs must do, whether or not the build has NCCL."""

    def test_auto_picks_mpi_without_gpus(self):
        rc, out, err = run(2, "--backend", "auto", "--op", "allreduce", "-b", "64", "-e", "64", "-n", "2",
                           "--format", "json")
        self.assertEqual(rc, 0, err)
        self.assertEqual(json.loads(out)["provenance"]["backend"], "mpi")

    def test_nccl_without_a_gpu(self):
        csv_path = self.path("rows.csv")
        rc, out, err = run(2, "--backend", "nccl", "-b", "8", "-e", "8", "--csv", csv_path)
        lines = [l for l in err.splitlines() if l.strip()]
        self.assertEqual(len(lines), 1, err)
        if "nccl" in built_backends():
            self.assertEqual(rc, 3, err)
            self.assertRegex(lines[0], r"^bench-collectives: error: no CUDA device on host \S+$")
        else:
            self.assertEqual(rc, 2, err)
            self.assertIn("--backend nccl: this build has no NCCL backend", lines[0])
        self.assertFalse(os.path.exists(csv_path))

    def test_nccl_only_flags_are_refused_with_mpi(self):
        for args, flag in [(["-g", "2"], "-g/--gpus-per-process"), (["--register"], "--register"),
                           (["-G", "10"], "-G/--cuda-graph"), (["-z"], "-z/--blocking")]:
            with self.subTest(args=args):
                rc, out, err = run(1, "--backend", "mpi", "-b", "8", "-e", "8", *args)
                self.assertEqual(rc, 2, err)
                self.assertEqual(err.strip(), f"bench-collectives: error: {flag}: applies to the nccl backend only "
                                              "(the mpi backend runs)")

    def test_garbage_cuda_visible_devices(self):
        if "nccl" not in built_backends():
            self.skipTest("this build has no NCCL backend")
        env_before = os.environ.get("CUDA_VISIBLE_DEVICES")
        os.environ["CUDA_VISIBLE_DEVICES"] = "0,one"
        try:
            rc, out, err = run(2, "--backend", "nccl", "-b", "8", "-e", "8")
        finally:
            if env_before is None:
                del os.environ["CUDA_VISIBLE_DEVICES"]
            else:
                os.environ["CUDA_VISIBLE_DEVICES"] = env_before
        self.assertEqual(rc, 2, err)
        self.assertEqual(err.strip(), "bench-collectives: error: CUDA_VISIBLE_DEVICES='0,one': 'one' is neither a "
                                      "device ordinal nor a GPU-/MIG- UUID")

    def test_garbage_slurm_variables_do_not_derail_an_mpi_run(self):
        # A job launched by mpirun inside an allocation inherits SLURM_* of the batch step;
        # garbage there must neither crash nor change what the MPI backend measures, and
        # the values are recorded as they were (JSON escapes the control character).
        garbage = {"SLURM_PROCID": "x1", "SLURM_LOCALID": "first", "SLURM_NTASKS": "-4",
                   "SLURM_JOB_NODELIST": "node[1-\x1b]", "SLURM_CPUS_ON_NODE": ""}
        saved = {k: os.environ.get(k) for k in garbage}
        os.environ.update(garbage)
        try:
            rc, out, err = run(2, "--backend", "mpi", "-b", "8", "-e", "8", "--op", "allreduce", "-n", "2",
                               "--format", "json")
        finally:
            for k, v in saved.items():
                if v is None:
                    del os.environ[k]
                else:
                    os.environ[k] = v
        self.assertEqual(rc, 0, err)
        doc = json.loads(out)
        self.assertEqual(doc["provenance"]["ranks"], 2)
        self.assertEqual(doc["provenance"]["environment"]["SLURM_LOCALID"], "first")
        self.assertEqual(doc["provenance"]["environment"]["SLURM_JOB_NODELIST"], "node[1-\x1b]")
        self.assertEqual(len(doc["rows"]), 1)

    def test_version_names_the_backends(self):
        self.assertIn("mpi", built_backends())


# The bad inputs judged against the ranks: the others are refused before MPI starts, the
# same with or without mpirun, and are run without it (a launch costs a second each).
NEEDS_RANKS = ({"-r", "2"}, {"-e", "15G"})


def run_alone(*args, timeout=60):
    """One process without mpirun: for inputs refused the same whatever the ranks."""
    p = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def run_bad_input(args, *more):
    if any(flags <= set(args) for flags in NEEDS_RANKS) or args is BAD_INPUTS[0][0]:
        return run(2, *args, *more, timeout=60)
    return run_alone(*args, *more)


class BadInput(TempDirTest):
    def test_each_bad_input_is_one_line_exit_2_and_no_file(self):
        for args, expected in BAD_INPUTS:
            with self.subTest(args=args):
                csv_path, json_path = self.path("out.csv"), self.path("out.json")
                rc, out, err = run_bad_input(args, "--csv", csv_path, "--json", json_path)
                self.assertEqual(rc, 2, f"{args}: {err}")
                lines = [l for l in err.splitlines() if l.strip()]
                self.assertEqual(len(lines), 1, f"{args}: {err}")
                self.assertTrue(lines[0].startswith("bench-collectives: error: "), lines[0])
                self.assertIn(expected, lines[0])
                self.assertNotIn("Traceback", err)
                self.assertFalse(os.path.exists(csv_path), args)
                self.assertFalse(os.path.exists(json_path), args)
                self.assertEqual(glob.glob(json_path + ".tmp*"), [], args)

    def test_empty_output_file_name(self):
        rc, out, err = run(2, "-b", "8", "-e", "8", "--csv", "")
        self.assertEqual(rc, 2)
        self.assertEqual(err.strip(), "bench-collectives: error: --csv: empty file name")

    def test_a_refused_json_path_leaves_no_csv_behind(self):
        csv_path = self.path("sub/out.csv")
        rc, out, err = run(2, "-b", "8", "-e", "8", "--csv", csv_path, "--json", "/proc/commbench/out.json")
        self.assertEqual(rc, 2)
        self.assertTrue(err.startswith("bench-collectives: error: --json /proc/commbench/out.json: cannot create "
                                       "directory /proc/commbench"), err)
        self.assertFalse(os.path.exists(self.path("sub")))  # not even the CSV's directory

    def test_a_full_disk_is_an_error_naming_the_file_not_lost_rows(self):
        rc, out, err = run(2, "-b", "8", "-e", "8", "--csv", "/dev/full", "--force")
        self.assertEqual(rc, 3, err)
        self.assertIn("bench-collectives: error: --csv /dev/full: write failed: No space left on device", err)

    def test_a_csv_fifo_nobody_reads_times_out(self):
        fifo = self.path("rows.fifo")
        os.mkfifo(fifo)
        rc, out, err = run(2, "-b", "8", "-e", "8", "--csv", fifo, "--force", "-T", "2", timeout=60)
        self.assertEqual(rc, 4, err)
        self.assertIn("opening the result files did not complete within 2 s", err)

    def test_json_is_never_renamed_over_a_device(self):
        rc, out, err = run(2, "-b", "8", "-e", "8", "--json", "/dev/null", "--force")
        self.assertEqual(rc, 2, err)
        self.assertEqual(err.strip(), "bench-collectives: error: --json /dev/null: not a regular file (results are "
                                      "renamed into place, which would replace it)")
        self.assertTrue(stat.S_ISCHR(os.stat("/dev/null").st_mode))

    def test_output_path_that_is_a_directory(self):
        rc, out, err = run(2, "-b", "8", "-e", "8", "--json", self.dir)
        self.assertEqual(rc, 2)
        self.assertEqual(err.strip(), f"bench-collectives: error: --json {self.dir}: is a directory")


class Alltoallv(TempDirTest):
    """alltoallv with each distribution: counts derived independently here, --check on real ranks."""

    DISTRIBUTIONS = ["uniform", "zipf:1.2", "hot:0.8"]

    def check_run(self, np, distribution):
        csv_path = self.path(f"alltoallv-{np}-{distribution.replace(':', '-')}.csv")
        rc, out, err = run(np, "--op", "alltoallv", "--alltoallv-distribution", distribution, "-c", "-d", "int32,double",
                           "--placement", "both", "-b", "8", "-e", "64K", "-f", "8", "-n", "2", "--csv", csv_path)
        self.assertEqual(rc, 0, err)
        self.assertIn("# note: skipped in-place alltoallv: a rank receives a different amount than it sends", out)
        self.assertIn(f"alltoallv_distribution={distribution}", out)
        with open(csv_path, newline="") as f:
            reader = csv.DictReader(f)
            self.assertEqual(reader.fieldnames, COLUMNS)  # the schema is unchanged
            rows = list(reader)
        sizes = geometric(8, 64 * 1024, 8)
        for dtype in ("int32", "double"):
            got = [int(r["bytes"]) for r in rows if r["dtype"] == dtype]
            self.assertEqual(got, expected_shapes("alltoall", dtype, sizes, np), dtype)  # alltoall's rounding
        for r in rows:
            where = f"{distribution} np {np} {r['dtype']} {r['bytes']}"
            self.assertEqual(r["op"], f"alltoallv({distribution})", where)
            self.assertEqual(r["placement"], "out", where)
            self.assertEqual(r["wrong"], "0", where)
            self.assertEqual((r["redop"], r["root"]), ("", ""), where)
            count, esize = int(r["count"]), ELEMENT_SIZE[r["dtype"]]
            self.assertEqual(int(r["bytes"]), count * np * esize, where)  # count = mean elements per peer
            algbw, busbw = float(r["algbw_gbps"]), float(r["busbw_gbps"])
            # busbw counts the (n-1)/n of what a rank sends that leaves it, whatever the skew.
            self.assertTrue(math.isclose(busbw, algbw * (np - 1) / np, rel_tol=1e-6, abs_tol=1e-12), where)

    def test_two_ranks(self):
        for distribution in self.DISTRIBUTIONS:
            with self.subTest(distribution=distribution):
                self.check_run(2, distribution)

    def test_three_ranks(self):
        for distribution in self.DISTRIBUTIONS:
            with self.subTest(distribution=distribution):
                self.check_run(3, distribution)

    def test_corrupted_output_is_caught_on_every_rank(self):
        for np in (2, 3):
            for rank in range(np):
                with self.subTest(np=np, rank=rank):
                    rc, out, err = run(np, "--op", "alltoallv", "--alltoallv-distribution", "zipf:1.5", "-b", "1K",
                                       "-e", "1K", "-n", "2", "-c", "--debug-corrupt-rank", str(rank), "--format", "csv")
                    self.assertEqual(rc, 1, err)
                    size = "1KiB" if np == 2 else "1020B"  # 1 KiB of float in whole chunks per rank
                    self.assertEqual(err.strip().splitlines(), [
                        f"bench-collectives: error: check failed: alltoallv {size} float zipf:1.5 out-of-place: "
                        f"1 wrong elements, first on rank {rank} (host " + err.split("(host ")[1].strip()])
                    rows = list(csv.DictReader(io.StringIO(out)))
                    self.assertEqual([(r["op"], r["wrong"]) for r in rows], [("alltoallv(zipf:1.5)", "1")])

    def test_not_part_of_op_all(self):
        rc, out, err = run(2, "--op", "all", "-b", "64", "-e", "64", "-n", "1", "-w", "0", "--format", "csv")
        self.assertEqual(rc, 0, err)
        ops = {r["op"] for r in csv.DictReader(io.StringIO(out))}
        self.assertEqual(ops, {"allreduce", "allgather", "reducescatter", "broadcast", "reduce", "alltoall", "sendrecv"})

    def test_a_baseline_keeps_distributions_apart(self):
        baseline = self.path("baseline.csv")
        rc, out, err = run(2, "--op", "alltoallv", "--alltoallv-distribution", "hot:0.9", "-b", "4K", "-e", "4K",
                           "-n", "2", "--csv", baseline)
        self.assertEqual(rc, 0, err)
        # Same distribution: the rule compares with the baseline row and holds.
        rc, out, err = run(2, "--op", "alltoallv", "--alltoallv-distribution", "hot:0.9", "-b", "4K", "-e", "4K",
                           "-n", "2", "--baseline", baseline, "--threshold", "alltoallv:busbw>=0.000001*baseline",
                           "--format", "csv")
        self.assertEqual(rc, 0, err)
        self.assertEqual([r["threshold"] for r in csv.DictReader(io.StringIO(out))], ["pass"])
        # Another distribution is another measurement: the baseline has no row for it.
        rc, out, err = run(2, "--op", "alltoallv", "--alltoallv-distribution", "uniform", "-b", "4K", "-e", "4K",
                           "-n", "2", "--baseline", baseline, "--threshold", "alltoallv:busbw>=0.000001*baseline")
        self.assertEqual(rc, 2, err)
        self.assertIn("has none of the measurements it selects, e.g. alltoallv 4KiB float uniform out-of-place", err)


class Thresholds(TempDirTest):
    """--threshold/--thresholds/--baseline: verdicts per row, exit 1 on a failed rule."""

    SWEEP = ("--op", "allreduce,broadcast", "-b", "1K", "-e", "16K", "-n", "3")

    def baseline(self):
        path = self.path("baseline.csv")
        rc, out, err = run(2, *self.SWEEP, "--csv", path)
        self.assertEqual(rc, 0, err)
        return path

    def test_rules_that_hold_pass_and_mark_every_row(self):
        base = self.baseline()
        csv_path, json_path = self.path("new.csv"), self.path("new.json")
        rc, out, err = run(2, *self.SWEEP, "--baseline", base, "--threshold", "busbw>=0.000001*baseline",
                           "--threshold", "time<=1000000*baseline", "--threshold", "allreduce@4K..:busbw>0",
                           "--csv", csv_path, "--json", json_path)
        self.assertEqual(rc, 0, err)
        self.assertEqual(err, "")
        with open(csv_path, newline="") as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(len(rows), 10)
        self.assertEqual({r["threshold"] for r in rows}, {"pass"})
        with open(json_path) as f:
            doc = json.load(f)
        self.assertEqual(doc["summary"]["threshold_rows"], 10)
        self.assertEqual(doc["summary"]["threshold_failures"], [])
        self.assertEqual(doc["provenance"]["settings"]["baseline"], base)
        self.assertIn("# thresholds: 10 rows checked, 0 rule failures", out)

    def test_a_failed_rule_exits_1_and_names_row_and_rule(self):
        base = self.baseline()
        rules = self.path("rules.txt")
        with open(rules, "w") as f:
            f.write("# acceptance\nallreduce@4K..8K : busbw >= 1000000 GB/s\nbusbw>=1000000*baseline\n")
        csv_path, json_path = self.path("new.csv"), self.path("new.json")
        rc, out, err = run(2, *self.SWEEP, "--baseline", base, "--thresholds", rules, "--threshold",
                           "broadcast:busbw>0", "--csv", csv_path, "--json", json_path)
        self.assertEqual(rc, 1, err)
        with open(csv_path, newline="") as f:
            rows = list(csv.DictReader(f))
        self.assertEqual([r["threshold"] for r in rows], ["fail"] * 10)
        with open(json_path) as f:
            doc = json.load(f)
        failures = doc["summary"]["threshold_failures"]
        # 2 rows fail both rules of the file, the other 8 the baseline rule; busbw>0 holds.
        self.assertEqual(len(failures), 12)
        self.assertEqual(doc["summary"]["exit_code"], 1)
        first = failures[0]
        self.assertTrue(first.startswith("allreduce 1KiB float sum out-of-place on 2 ranks: busbw "), first)
        self.assertIn(" x baseline ", first)
        self.assertTrue(first.endswith(f"rule 'busbw>=1000000*baseline' (--thresholds {rules} line 3)"), first)
        self.assertIn(f"needs >= 1e+06 GB/s; rule 'allreduce@4K..8K : busbw >= 1000000 GB/s' "
                      f"(--thresholds {rules} line 2)", failures[2])
        lines = err.splitlines()
        self.assertEqual(len(lines), 11)  # ten failures, then how many more
        self.assertTrue(all(l.startswith("bench-collectives: error: threshold failed: ") for l in lines[:10]))
        self.assertEqual(lines[10], "bench-collectives: error: ... and 2 more threshold failures (all are listed at "
                                    "the end of the table and in the JSON summary)")
        self.assertIn("# threshold failed: " + failures[11], out)

    def test_baseline_rows_the_run_lacks_are_noted_not_failed(self):
        base = self.baseline()
        rc, out, err = run(2, "--op", "allreduce", "-b", "8K", "-e", "64K", "-n", "2", "--baseline", base,
                           "--threshold", "busbw>=0*baseline", "--format", "csv")
        self.assertEqual(rc, 0, err)
        rows = list(csv.DictReader(io.StringIO(out)))
        self.assertEqual([r["threshold"] for r in rows], ["pass", "pass", "", ""])

    def test_a_baseline_from_another_backend_is_noted(self):
        base = self.baseline()
        other = self.path("other.csv")
        with open(base, newline="") as f:
            rows = list(csv.reader(f))
        for row in rows[1:]:
            row[0] = "nccl"  # the backend column
        with open(other, "w", newline="") as f:
            csv.writer(f).writerows(rows)
        rc, out, err = run(2, *self.SWEEP, "--baseline", other, "--threshold", "busbw>=0*baseline")
        self.assertEqual(rc, 0, err)
        self.assertIn(f"# note: --baseline {other} line 2 was measured with the nccl backend on 1 node(s); this run uses "
                      "mpi on 1: the comparison is not like with like", out)

    def test_bad_rules_and_files_are_refused_before_any_file_is_written(self):
        base = self.baseline()
        wrong_ranks = self.path("four.csv")
        rc, _, err = run(4, "--op", "allreduce", "-b", "1K", "-e", "1K", "-n", "1", "--csv", wrong_ranks)
        self.assertEqual(rc, 0, err)
        header_only = self.path("header.csv")
        with open(base) as f, open(header_only, "w") as g:
            g.write(f.readline())
        broken = self.path("broken.csv")
        with open(base) as f, open(broken, "w") as g:
            g.write(f.readline() + "allreduce,out\n")
        rules = self.path("rules.txt")
        with open(rules, "w") as f:
            f.write("busbw>=1\n\nbusbw>=fast\n")
        cases = [
            (["--threshold", "busbw>=0.9*baseline"],
             "--threshold 'busbw>=0.9*baseline': compares with the baseline, but no --baseline was given"),
            (["--baseline", base], f"--baseline {base}: no threshold rule compares with it"),
            (["--baseline", self.path("none.csv"), "--threshold", "busbw>=baseline"],
             f"--baseline {self.path('none.csv')}: cannot read (No such file or directory)"),
            (["--baseline", self.dir, "--threshold", "busbw>=baseline"],
             f"--baseline {self.dir}: cannot read (is a directory)"),
            (["--baseline", header_only, "--threshold", "busbw>=baseline"],
             f"--baseline {header_only}: no measurements (only a header)"),
            (["--baseline", broken, "--threshold", "busbw>=baseline"],
             f"--baseline {broken} line 2: has 2 fields, the header has 33"),
            (["--baseline", wrong_ranks, "--threshold", "busbw>=baseline"],
             f"--baseline {wrong_ranks} has none of the measurements it selects, e.g. allreduce 1KiB float sum "
             "out-of-place on 2 ranks (the baseline has rows for 4 ranks)"),
            (["--thresholds", rules], f"--thresholds {rules} line 3 'busbw>=fast': 'fast' is not a number"),
            (["--thresholds", self.path("none.txt")], "cannot read (No such file or directory)"),
            (["--threshold", "allreduce@1G..:busbw>=1"],
             "--threshold 'allreduce@1G..:busbw>=1': selects none of this run's measurements (allreduce,broadcast "
             "from 1KiB to 16KiB)"),
            (["--threshold", "efficiency>=80%"],
             "--threshold 'efficiency>=80%': the bandwidth model has no theoretical busbw for allreduce here"),
            (["--threshold", "busbw>=0.8*achievable"], "the bandwidth model has no achievable busbw for allreduce"),
            (["--threshold", "bandwidth>=1"], "--threshold 'bandwidth>=1': unknown metric 'bandwidth'"),
            (["--threshold", "busbw=1"], "--threshold 'busbw=1': no comparison after busbw"),
            (["--threshold", "efficiency>=80"], "efficiency is a fraction (0.8) or a percentage (80%), not 80"),
            (["--threshold", "@8K..1K:busbw>=1"], "size range 8KiB..1KiB is empty"),
            (["--threshold", "gather:busbw>=1"], "--threshold 'gather:busbw>=1': collective: unknown value 'gather'"),
            (["--threshold", "time<=theoretical"], "theoretical is a busbw bound"),
            (["--threshold", ""], "--threshold '': empty rule"),
            (["--threshold", "allreduce,alltoall:busbw>=1"],
             "--threshold 'allreduce,alltoall:busbw>=1': selects no alltoall measurement of this run"),
            (["--threshold", "busbw>=100Gb/s"], "'Gb/s' is gigabits per second; busbw is in GB/s (gigabytes)"),
            (["--baseline", "", "--threshold", "busbw>=baseline"], "--baseline: empty file name"),
            (["--thresholds", ""], "--thresholds: empty file name"),
        ]
        # Under mpirun: the first (the wiring) and the baseline whose rows are for other ranks;
        # the others are refused the same by one process (a launch costs a second each).
        under_mpirun = (cases[0][0], cases[6][0])
        for args, expected in cases:
            with self.subTest(args=args):
                csv_path, json_path = self.path("out.csv"), self.path("out.json")
                sweep = (*self.SWEEP, *args, "--csv", csv_path, "--json", json_path)
                rc, out, err = run(2, *sweep, timeout=60) if args in under_mpirun else run_alone(*sweep)
                self.assertEqual(rc, 2, f"{args}: {err}")
                lines = [l for l in err.splitlines() if l.strip()]
                self.assertEqual(len(lines), 1, f"{args}: {err}")
                self.assertTrue(lines[0].startswith("bench-collectives: error: "), lines[0])
                self.assertIn(expected, lines[0])
                self.assertFalse(os.path.exists(csv_path), args)
                self.assertFalse(os.path.exists(json_path), args)

    def test_a_rules_file_that_never_delivers_times_out(self):
        fifo = self.path("rules.fifo")
        os.mkfifo(fifo)
        start = time.time()
        rc, out, err = run(2, *self.SWEEP, "--thresholds", fifo, "-T", "2", timeout=60)
        self.assertEqual(rc, 4, err)
        self.assertLess(time.time() - start, 2 + 10)
        self.assertIn("reading --thresholds/--baseline did not complete within 2 s", err)


if __name__ == "__main__":
    unittest.main(verbosity=2)
