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
import shutil
import subprocess
import tempfile
import unittest


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
            time_us, algbw, busbw = float(r["time_us"]), float(r["algbw_gbps"]), float(r["busbw_gbps"] or "nan")
            self.assertGreater(time_us, 0, where)
            self.assertTrue(math.isclose(algbw, int(r["bytes"]) / time_us / 1e3, rel_tol=1e-6), where)
            # One rank: nothing crosses a link, so busbw is empty.
            self.assertTrue(math.isclose(busbw, algbw * bus_factor(r["op"], np), rel_tol=1e-6, abs_tol=1e-12)
                            if np > 1 else r["busbw_gbps"] == "", where)
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
            self.assertTrue(math.isclose(jrow["busbw_gbps"] or 0, float(crow["busbw_gbps"] or 0), rel_tol=1e-6))
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

    def test_one_rank_model_says_nothing_crosses_a_link(self):
        rc, out, err = run(1, "--op", "broadcast", "-b", "1K", "-e", "1K", "-n", "2", "--format", "json")
        self.assertEqual(rc, 0, err)
        notes = json.loads(out)["provenance"]["notes"]
        self.assertIn("theoretical busbw of broadcast: unknown; one rank: nothing crosses a link", notes)
        self.assertIsNone(json.loads(out)["rows"][0]["busbw_gbps"])

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


if __name__ == "__main__":
    unittest.main(verbosity=2)
