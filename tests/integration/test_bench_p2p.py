"""bench-p2p on real MPI ranks: every schedule's rounds hold disjoint pairs and every
ordered pair is measured exactly once per direction; bad input is one line and exit 2.
(The throttled-node case runs on the Slurm test cluster: test_slurm.PairMatrix.)"""
import csv
import json
import os
import shutil
import socket
import subprocess
import tempfile
import unittest

BIN = os.environ.get("COMMBENCH_BENCH_P2P", "build/bench/bench-p2p")
MPIEXEC = os.environ.get("COMMBENCH_MPIEXEC", "mpirun")


def run(np, *args, timeout=240, backend=("--backend", "mpi")):
    env = {name: value for name, value in os.environ.items() if not name.startswith("SLURM_")}
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_mpi_yield_when_idle="1")
    cmd = [MPIEXEC, "-q", "--oversubscribe", "-np", str(np), BIN, *backend, *map(str, args)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    return p.returncode, p.stdout, p.stderr


class TempDirTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="commbench-p2p-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def measure(self, np, *args):
        csv_path, json_path = self.path("p.csv"), self.path("p.json")
        rc, out, err = run(np, "-b", "64K", "-n", "3", "--latency-iters", "10", "--csv", csv_path, "--json", json_path,
                           "--force", *args)
        self.assertEqual(rc, 0, err)
        with open(csv_path, newline="") as f:
            rows = list(csv.DictReader(f))
        with open(json_path) as f:
            doc = json.load(f)
        return rows, doc, out

    def assert_disjoint_rounds(self, rounds, ranks):
        for number, pairs in enumerate(rounds):
            members = [rank for pair in pairs for rank in pair]
            self.assertEqual(len(members), len(set(members)), "round %d shares a rank: %s" % (number, pairs))
            self.assertTrue(all(0 <= rank < ranks for rank in members))


class Schedules(TempDirTest):
    def ordered_pairs(self, rows):
        return sorted((int(r["src_rank"]), int(r["dst_rank"])) for r in rows)

    def test_all_pairs_on_four_ranks_measures_each_ordered_pair_once(self):
        rows, doc, out = self.measure(4, "--schedule", "all-pairs")
        self.assertEqual(self.ordered_pairs(rows), [(a, b) for a in range(4) for b in range(4) if a != b])
        self.assertEqual(len(doc["rounds"]), 3)  # n-1 rounds of n/2 pairs
        self.assert_disjoint_rounds(doc["rounds"], 4)
        self.assertEqual(sorted(tuple(p) for r in doc["rounds"] for p in r), [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)])
        for row in rows:
            self.assertEqual(row["direction"], "one-way")
            self.assertEqual(row["bytes"], "65536")
            self.assertGreater(float(row["gbps"]), 0)
            self.assertGreater(float(row["latency_us"]), 0)
            self.assertEqual(row["src_device"], "host")
            # 4 ranks sharing 2 cores: a cell may be an outlier, and then it says why.
            self.assertEqual(row["flagged"] == "true", row["reason"] != "")
            # the round named in the row holds its pair
            pair = sorted((int(row["src_rank"]), int(row["dst_rank"])))
            self.assertIn(pair, doc["rounds"][int(row["round"])])
        self.assertEqual(doc["schema"], "commbench.p2p/1")
        self.assertEqual(doc["provenance"]["settings"]["schedule"], "all-pairs")
        self.assertEqual(len(doc["cells"]), 12)
        self.assertIn("bandwidth (GB/s), one direction at a time, 64KiB messages", out)
        flagged = sum(row["flagged"] == "true" for row in rows)
        self.assertEqual(out.count("OUTLIER "), flagged)

    def test_ring_measures_each_neighbour_pair_both_ways(self):
        rows, doc, _ = self.measure(4, "--schedule", "ring")
        self.assertEqual(self.ordered_pairs(rows), [(0, 1), (0, 3), (1, 0), (1, 2), (2, 1), (2, 3), (3, 0), (3, 2)])
        self.assertEqual(len(doc["rounds"]), 2)
        self.assert_disjoint_rounds(doc["rounds"], 4)

    def test_random_rounds_are_disjoint_matchings_and_repeat_with_the_seed(self):
        rows, doc, _ = self.measure(4, "--schedule", "random", "--rounds", "3", "--seed", "7")
        self.assertEqual(len(doc["rounds"]), 3)
        self.assert_disjoint_rounds(doc["rounds"], 4)
        self.assertTrue(all(len(pairs) == 2 for pairs in doc["rounds"]))
        self.assertEqual(len(rows), 3 * 2 * 2)  # rounds x pairs x directions
        _, again, _ = self.measure(4, "--schedule", "random", "--rounds", "3", "--seed", "7")
        self.assertEqual(again["rounds"], doc["rounds"])

    def test_both_ways_and_an_odd_rank_count(self):
        rows, doc, out = self.measure(3, "--both-ways", "-c")
        self.assertEqual(self.ordered_pairs(rows), [(a, b) for a in range(3) for b in range(3) if a != b])
        self.assertEqual({r["direction"] for r in rows}, {"both"})
        self.assertEqual(len(doc["rounds"]), 3)  # odd: n rounds, one rank idle in each
        self.assert_disjoint_rounds(doc["rounds"], 3)
        self.assertIn("both directions at once", out)
        self.assertEqual(doc["exit_code"], 0)

    def test_past_64_ranks_the_console_lists_outliers_only(self):
        csv_path = self.path("wide.csv")
        rc, out, err = run(65, "--schedule", "ring", "-b", "8", "-n", "1", "-w", "0", "--latency-bytes", "0",
                           "--csv", csv_path)
        self.assertEqual(rc, 0, err)
        self.assertIn("(the 65 x 65 matrices are not printed past 64 ranks: the CSV and JSON hold every cell)", out)
        self.assertNotIn("bandwidth (GB/s)", out)
        with open(csv_path, newline="") as f:
            self.assertEqual(len(list(csv.DictReader(f))), 65 * 2)  # the ring's 65 pairs, one way each


class BadInput(TempDirTest):
    def test_each_mistake_is_one_line_and_exit_2(self):
        # Ranks None: refused before MPI starts, the same with or without mpirun, so run as
        # one process (a launch costs a second each); the first proves it under mpirun.
        cases = [
            (2, ["--schedule", "mesh"], "bench-p2p: error: --schedule: 'mesh' is not a schedule (all-pairs, ring or random)"),
            (None, ["--schedule", "random"], "bench-p2p: error: --schedule random: give --rounds K"),
            (None, ["--rounds", "3"], "bench-p2p: error: --rounds: applies to --schedule random only"),
            (None, ["--outlier-fraction", "0"], "bench-p2p: error: --outlier-fraction: '0' is not in (0, 1]"),
            (None, ["-b", "0"], None),
            (1, [], "bench-p2p: error: needs at least 2 ranks (got 1): run it under mpirun or srun, or with --local inside one node"),
            (None, ["--schedule", "random", "--rounds", "4294967297"],
             "bench-p2p: error: --rounds: '4294967297' is more than 2147483647"),
            (2, ["--schedule", "random", "--rounds", "10000000"],
             "bench-p2p: error: --schedule random: 20000000 cells on 2 ranks is more than the 16777216 one report "
             "holds; use --per-rail, --schedule random --rounds K, or fewer ranks per node"),
            (2, ["--per-rail"], "bench-p2p: error: --per-rail: needs ranks on at least 2 nodes (all 2 ranks are on %s)"
             % socket.gethostname()),
            (None, ["--local"], "bench-p2p: error: --backend: does not apply to --local"),
            (None, ["--methods", "nccl"], "bench-p2p: error: --methods: applies to --local only"),
            (None, ["-c", "2"], "bench-p2p: error: -c/--check: expected 0 or 1 (got 2)"),
        ]
        for np, args, message in cases:
            with self.subTest(args=args):
                if np is None:
                    p = subprocess.run([BIN, "--backend", "mpi", *args, "--json", self.path("never.json")],
                                       capture_output=True, text=True, timeout=60)
                    rc, err = p.returncode, p.stderr
                else:
                    rc, out, err = run(np, *args, "--json", self.path("never.json"))
                self.assertEqual(rc, 2, err)
                lines = [line for line in err.strip().splitlines() if line.startswith("bench-p2p")]
                self.assertEqual(len(lines), 1, err)
                if message:
                    self.assertEqual(lines[0], message)
                self.assertFalse(os.path.exists(self.path("never.json")))


def built_with_cuda():
    # --version lists the backends the binary was built with; nccl means CUDA too.
    out = subprocess.run([BIN, "--version"], capture_output=True, text=True, timeout=60).stdout
    return any(line.startswith("backends: ") and "nccl" in line.split(": ", 1)[1].split(", ")
               for line in out.splitlines())


def gpu_present():
    try:
        return subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


class LocalWithoutGpu(TempDirTest):
    """--local's flags, and on a host without a GPU one line and exit 3 from every rank
    (tests/gpu/test_gpu_p2p.py measures a real GPU)."""

    def run_local(self, np, *args):
        return run(np, "--local", "--json", self.path("never.json"), "--csv", self.path("never.csv"), *args,
                   backend=())

    def assert_one_line(self, rc, err, code, message):
        self.assertEqual(rc, code, err)
        lines = [line for line in err.strip().splitlines() if line.startswith("bench-p2p")]
        self.assertEqual(lines, [message], err)
        self.assertFalse(os.path.exists(self.path("never.json")))
        self.assertFalse(os.path.exists(self.path("never.csv")))

    def test_flags_that_choose_rank_pairs_do_not_apply(self):
        if not built_with_cuda():
            self.skipTest("built without CUDA: every --local is refused for that first")
        cases = [
            (["--schedule", "ring"], "bench-p2p: error: --schedule: does not apply to --local"),
            (["--per-rail"], "bench-p2p: error: --per-rail: does not apply to --local"),
            (["--seed", "3"], "bench-p2p: error: --seed: does not apply to --local"),
            (["--methods", "copy-engine,ce"], "bench-p2p: error: --methods: 'ce' is not one of copy-engine, sm-copy, nccl"),
            (["--latency-bytes", "16"], "bench-p2p: error: --latency-bytes: --local times 8-byte loads; give 8 or 0 "
                                        "(no latency)"),
        ]
        for args, message in cases:
            with self.subTest(args=args):
                rc, _, err = self.run_local(1, *args)
                self.assert_one_line(rc, err, 2, message)

    def test_no_gpu_is_one_line_and_exit_3_on_every_rank(self):
        if gpu_present():
            self.skipTest("this host has a GPU: tests/gpu/test_gpu_p2p.py measures it")
        rc, _, err = self.run_local(2)
        if not built_with_cuda():
            self.assert_one_line(rc, err, 2, "bench-p2p: error: --local: this bench-p2p was built without CUDA "
                                             "(configure with -DCOMMBENCH_WITH_NCCL=ON)")
            return
        self.assertEqual(rc, 3, err)
        lines = [line for line in err.strip().splitlines() if line.startswith("bench-p2p")]
        self.assertEqual(len(lines), 1, err)
        self.assertTrue(lines[0].startswith("bench-p2p: error: no CUDA device: "), err)
        self.assertFalse(os.path.exists(self.path("never.json")))
        # Not begun before the GPUs were open: no CSV of a header alone either.
        self.assertFalse(os.path.exists(self.path("never.csv")))


if __name__ == "__main__":
    unittest.main()
