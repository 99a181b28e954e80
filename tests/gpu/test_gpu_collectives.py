"""GPU tests (ctest label `gpu`): every collective on the NCCL backend with --check.

Exits 77 (ctest: skipped) with the reason when this machine has no GPU or the build has no
NCCL backend, so the suite passes on CPU-only CI and proves the backend where a GPU exists.
"""
import csv
import io
import json
import os
import subprocess
import tempfile
import time
import unittest

from gpu_machine import gpus_or_skip

BIN = os.environ.get("COMMBENCH_BENCH_COLLECTIVES", "build/bench/bench-collectives")
MPIEXEC = os.environ.get("COMMBENCH_MPIEXEC", "")  # empty: a build without MPI, one process


def run(np, *args, timeout=900):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    launcher = [MPIEXEC, "-q", "--oversubscribe", "-np", str(np)] if MPIEXEC else []
    if not MPIEXEC and np != 1:
        raise unittest.SkipTest("several processes need MPI; this build has none")
    cmd = [*launcher, BIN, "--backend", "nccl", *map(str, args)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    return p.returncode, p.stdout, p.stderr


ALGORITHMS = {"RING", "TREE", "NVLS", "NVLS_TREE", "COLLNET_DIRECT", "COLLNET_CHAIN", "PAT"}


class NcclCollectives(unittest.TestCase):
    GPUS = 0

    def check_rows(self, rows, ranks):
        self.assertTrue(rows)
        for r in rows:
            where = f"{r['op']} {r['dtype']} {r['redop']} {r['bytes']} {r['placement']}"
            self.assertEqual(r["backend"], "nccl")
            # NCCL 2.26.2 and newer report their choices to the program's profiler plugin.
            # One rank launches no kernel for some cases (NCCL returns at once): then empty.
            if r["nccl_algo"]:
                self.assertIn(r["nccl_algo"], ALGORITHMS | {"mixed"}, where)
                self.assertIn(r["nccl_proto"], {"LL", "LL128", "SIMPLE", "mixed"}, where)
                self.assertRegex(r["nccl_channels"], r"^([0-9]+|mixed)$", where)
            self.assertEqual(r["wrong"], "0", where)
            self.assertEqual(int(r["ranks"]), ranks)
            self.assertGreater(float(r["time_us"]), 0, where)
            algbw, busbw = float(r["algbw_gbps"]), float(r["busbw_gbps"])
            # A case that moves data cannot beat 10 TB/s (no GPU link or memory does): a
            # timing bug. An in-place collective on one rank moves nothing at all (NCCL
            # returns at once; an H100 read 23 405 GB/s for an in-place 8 MiB allreduce),
            # so no bound holds for it; test_a_large_copy_takes_the_time_memory_needs
            # catches timing bugs on one rank instead.
            if not (ranks == 1 and r["placement"] == "in"):
                self.assertLess(algbw, 10000, where)
            if ranks == 1 and r["op"].split("(")[0] in ("allreduce", "allgather", "reducescatter", "alltoall",
                                                        "alltoallv"):
                self.assertEqual(busbw, 0.0, where)

    def test_every_collective_one_rank_checked(self):
        rc, out, err = run(1, "--op", "all", "-d", "float,half,bfloat16,int32,double,uint8", "-o", "sum,max,avg",
                           "--placement", "both", "-c", "-b", "8", "-e", "16M", "-f", "16", "-n", "5",
                           "--format", "csv")
        self.assertEqual(rc, 0, err)
        rows = list(csv.DictReader(io.StringIO(out)))
        self.check_rows(rows, 1)
        big = [r for r in rows if r["op"] == "broadcast" and int(r["bytes"]) == 16 << 20]
        self.assertTrue(all(float(r["busbw_gbps"]) > 1.0 for r in big), big)

    def test_one_rank_says_why_nccls_choices_are_empty_and_batches_last_5_ms(self):
        with tempfile.TemporaryDirectory() as folder:
            json_path = os.path.join(folder, "one.json")
            rc, out, err = run(1, "--op", "allreduce", "-b", "1M", "-e", "1M", "--json", json_path)
            self.assertEqual(rc, 0, err)
            self.assertIn("# note: nccl_algo, nccl_proto, nccl_channels: empty: on one rank NCCL runs each "
                          "collective as a copy", out)
            with open(json_path) as f:
                doc = json.load(f)
        self.assertEqual(doc["provenance"]["settings"]["batch_time_s"], "0.005")
        self.assertTrue(all(r["nccl_algo"] is None for r in doc["rows"]), doc["rows"])

    def test_a_large_copy_takes_the_time_memory_needs(self):
        # Out of place on one rank, a 1 GiB broadcast copies the buffer: it reads and writes
        # 1 GiB of device memory, far beyond any L2. No GPU memory moves 10 TB/s (H100 HBM3
        # is 3.35, H200 4.8), so algbw above 5000 GB/s is a timing bug; and the iterations
        # the row claims cannot have taken longer than the whole process did.
        started = time.monotonic()
        rc, out, err = run(1, "--op", "broadcast", "--placement", "out", "-b", "1G", "-e", "1G", "-n", "20",
                           "-w", "2", "--format", "csv")
        wall_seconds = time.monotonic() - started
        self.assertEqual(rc, 0, err)
        rows = list(csv.DictReader(io.StringIO(out)))
        self.assertEqual(len(rows), 1)
        row = rows[0]
        self.assertEqual((row["iterations"], row["stop_reason"]), ("20", "fixed_count"))
        self.assertLess(float(row["algbw_gbps"]), 5000, row)
        self.assertGreater(float(row["algbw_gbps"]), 50, row)  # and it is a copy, not a no-op
        self.assertLess(float(row["time_us"]) * 20 / 1e6, wall_seconds, row)

    def test_json_provenance_names_the_gpu(self):
        rc, out, err = run(1, "--op", "allreduce", "-b", "1M", "-e", "1M", "-n", "5", "--format", "json")
        self.assertEqual(rc, 0, err)
        doc = json.loads(out)
        self.assertEqual(doc["provenance"]["backend"], "nccl")
        self.assertIn("NCCL ", doc["provenance"]["backend_version"])
        self.assertTrue(any("PCI" in d for d in doc["provenance"]["devices"]), doc["provenance"]["devices"])

    def test_corruption_is_caught_on_the_gpu(self):
        rc, out, err = run(1, "--op", "allreduce", "-b", "4K", "-e", "4K", "-n", "2", "-c", "--debug-corrupt-rank", "0")
        self.assertEqual(rc, 1, err)
        self.assertIn("1 wrong elements, first on rank 0", err)

    def test_cuda_graph_and_blocking_modes(self):
        for extra in (["-G", "10"], ["-z"], ["--register"]):
            with self.subTest(extra=extra):
                rc, out, err = run(1, "--op", "allreduce,broadcast", "-c", "-b", "1K", "-e", "1M", "-f", "32",
                                   "-n", "20", "--format", "csv", *extra)
                self.assertEqual(rc, 0, err)
                self.check_rows(list(csv.DictReader(io.StringIO(out))), 1)

    def test_fp8_where_supported(self):
        rc, out, err = run(1, "--op", "allreduce,allgather", "-d", "f8e4m3,f8e5m2", "-c", "-b", "1K", "-e", "64K",
                           "-n", "3", "--format", "csv")
        if rc == 2 and "needs" in err:
            self.skipTest(err.strip())
        self.assertEqual(rc, 0, err)
        self.check_rows(list(csv.DictReader(io.StringIO(out))), 1)

    def test_alltoallv_every_distribution_checked(self):
        for distribution in ("uniform", "zipf:1.2", "hot:0.9"):
            with self.subTest(distribution=distribution):
                rc, out, err = run(1, "--op", "alltoallv", "--alltoallv-distribution", distribution, "-d",
                                   "float,half,int8", "-c", "-b", "8", "-e", "16M", "-f", "64", "-n", "5",
                                   "--format", "csv")
                self.assertEqual(rc, 0, err)
                rows = list(csv.DictReader(io.StringIO(out)))
                self.check_rows(rows, 1)
                self.assertEqual({r["op"] for r in rows}, {f"alltoallv({distribution})"})
        rc, out, err = run(1, "--op", "alltoallv", "-b", "4K", "-e", "4K", "-n", "2", "-c", "--debug-corrupt-rank", "0")
        self.assertEqual(rc, 1, err)
        self.assertIn("check failed: alltoallv 4KiB float uniform out-of-place: 1 wrong elements", err)

    def test_several_gpus(self):
        if self.GPUS < 2:
            self.skipTest("needs 2 GPUs")
        rc, out, err = run(2, "--op", "all", "-c", "-b", "8", "-e", "16M", "-f", "64", "-n", "5", "--format", "csv")
        self.assertEqual(rc, 0, err)
        self.check_rows(list(csv.DictReader(io.StringIO(out))), 2)
        rc, out, err = run(1, "-g", "2", "--op", "allreduce,sendrecv", "-c", "-b", "8", "-e", "1M", "-f", "64",
                           "-n", "5", "--format", "csv")
        self.assertEqual(rc, 0, err)
        self.check_rows(list(csv.DictReader(io.StringIO(out))), 2)
        # alltoallv with one process driving both GPUs: per-device counts inside one group.
        rc, out, err = run(1, "-g", "2", "--op", "alltoallv", "--alltoallv-distribution", "hot:0.8", "-c", "-b", "8",
                           "-e", "1M", "-f", "64", "-n", "5", "--format", "csv")
        self.assertEqual(rc, 0, err)
        self.check_rows(list(csv.DictReader(io.StringIO(out))), 2)


if __name__ == "__main__":
    NcclCollectives.GPUS = gpus_or_skip(BIN)
    unittest.main(verbosity=2)
