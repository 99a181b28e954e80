"""What a newcomer meets in the first hour (issue 56): a run of one rank started without
mpirun says it ran one rank and prints no busbw it cannot mean; mistyped flags and values
get a suggestion, in every command; counts are said in the right number; a machine with
no NVIDIA driver is told so plainly. Assertions are on exit codes, parsed files and lines."""
import csv
import json
import os
import re
import subprocess
import unittest

from test_bench_collectives import BIN, MPIEXEC, TempDirTest

BUILD_BENCH = os.path.dirname(BIN)
PATTERNS = os.environ.get("COMMBENCH_BENCH_PATTERNS", os.path.join(BUILD_BENCH, "bench-patterns"))
P2P = os.environ.get("COMMBENCH_BENCH_P2P", os.path.join(BUILD_BENCH, "bench-p2p"))
VALIDATE = os.environ.get("COMMBENCH_BENCH_VALIDATE", os.path.join(BUILD_BENCH, "bench-validate"))
TOPOLOGY = os.environ.get("COMMBENCH_BENCH_TOPOLOGY", os.path.join(BUILD_BENCH, "bench-topology"))
REPLAY = os.environ.get("COMMBENCH_BENCH_REPLAY", os.path.join(BUILD_BENCH, "bench-replay"))
LAUNCHER_VARIABLES = ("OMPI_", "PMIX_", "PMI_", "SLURM_")


def run_alone(binary, *args, timeout=240):
    """Started as a newcomer starts it: no mpirun, no srun, nothing of theirs in the environment."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(LAUNCHER_VARIABLES)}
    p = subprocess.run([binary, *map(str, args)], capture_output=True, text=True, timeout=timeout, env=env)
    return p.returncode, p.stdout, p.stderr


def run_launched(np, binary, *args, timeout=240):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    cmd = [MPIEXEC, "-q", "--oversubscribe", "-np", str(np), binary, *map(str, args)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    return p.returncode, p.stdout, p.stderr


def table_rows(out):
    return [line for line in out.splitlines() if line.strip() and not line.startswith("#")]


BUSBW = 11  # the console table's busbw column


class OneRank(TempDirTest):
    SWEEP = ("--op", "broadcast,allreduce", "-b", "1K", "-e", "4K", "-n", "3", "-w", "0")

    def test_alone_it_says_one_rank_ran_and_prints_no_busbw(self):
        csv_path, json_path = self.path("t.csv"), self.path("t.json")
        rc, out, err = run_alone(BIN, *self.SWEEP, "--csv", csv_path, "--json", json_path)
        self.assertEqual(rc, 0, err)
        notes = [line for line in out.splitlines() if line.startswith("# note: ")]
        self.assertEqual(notes[0], "# note: ran one rank (started without mpirun or srun): nothing crosses a link, so "
                                   "busbw is empty (- in the table) and has no average; start more with mpirun -np N "
                                   "or srun -n N")
        rows = table_rows(out)
        self.assertEqual(len(rows), 6, out)
        self.assertEqual({row.split()[BUSBW] for row in rows}, {"-"})
        # A local copy's absurd algbw must not push the columns apart.
        self.assertEqual({len(row) for row in rows}, {len(rows[0])}, out)
        self.assertIn("# rows: 6  wrong elements: not checked  complete: yes\n# Avg bus bandwidth    : -\n", out)
        with open(csv_path, newline="") as f:
            records = list(csv.DictReader(f))
        self.assertEqual([r["busbw_gbps"] for r in records], [""] * 6)
        self.assertTrue(all(float(r["algbw_gbps"]) > 0 for r in records))
        with open(json_path) as f:
            doc = json.load(f)
        self.assertEqual([r["busbw_gbps"] for r in doc["rows"]], [None] * 6)
        self.assertIsNone(doc["summary"]["average_busbw_gbps"])
        self.assertIsNone(doc["summary"]["wrong_elements"])
        self.assertIn(notes[0][len("# note: "):], doc["provenance"]["notes"])

    def test_under_mpirun_one_rank_is_not_called_an_accident(self):
        rc, out, err = run_launched(1, BIN, *self.SWEEP, "-c", "1")
        self.assertEqual(rc, 0, err)
        self.assertIn("# note: one rank: nothing crosses a link, so busbw is empty (- in the table) and has no "
                      "average\n", out)
        self.assertNotIn("started without mpirun", out)
        self.assertIn("wrong elements: 0  complete: yes", out)

    def test_two_ranks_keep_nccl_tests_figures(self):
        rc, out, err = run_launched(2, BIN, *self.SWEEP)
        self.assertEqual(rc, 0, err)
        self.assertNotIn("one rank", out)
        self.assertTrue(all(re.fullmatch(r"[0-9]+\.[0-9]{3}", row.split()[BUSBW]) for row in table_rows(out)), out)
        self.assertRegex(out, r"\n# Avg bus bandwidth    : [0-9.e+-]+ GB/s\n")


# (binary, arguments, the one error line) for a mistyped flag or value, in each command.
MISTYPED = [
    (BIN, ["--max-byte", "1M"], "bench-collectives: error: unknown flag --max-byte (did you mean --max-bytes?) "
                                "(see --help)"),
    (BIN, ["--jsno", "x.json"], "bench-collectives: error: unknown flag --jsno (did you mean --json?) (see --help)"),
    (PATTERNS, ["--jsno", "x.json"], "bench-patterns: error: unknown flag --jsno (did you mean --json?) (see --help)"),
    (P2P, ["--jsno", "x.json"], "bench-p2p: error: unknown flag --jsno (did you mean --json?) (see --help)"),
    (VALIDATE, ["--jsno", "x.json"], "bench-validate: error: unknown flag --jsno (did you mean --json?) (see --help)"),
    (TOPOLOGY, ["--jsno", "x.json"], "bench-topology: error: unknown flag --jsno (did you mean --json?) (see --help)"),
    (REPLAY, ["--jsno", "x.json"], "bench-replay: error: unknown flag --jsno (did you mean --json?) (see --help)"),
    (BIN, ["--op", "allreduc"], "bench-collectives: error: --op: unknown value 'allreduc' (did you mean allreduce?); "
                                "expected one of: "),
    (PATTERNS, ["--pattern", "zero4"], "bench-patterns: error: --pattern: unknown value 'zero4' (did you mean "
                                       "zero1?); expected one of: "),
    (BIN, ["-e", "1.5M"], "bench-collectives: error: -e/--max-bytes: '1.5M' has a fraction; sizes are whole numbers "
                          "of bytes or units: write 1536K"),
]


class Messages(unittest.TestCase):
    def test_a_mistyped_flag_or_value_gets_a_suggestion(self):
        for binary, args, expected in MISTYPED:
            with self.subTest(program=os.path.basename(binary), args=args):
                rc, out, err = run_alone(binary, *args, timeout=60)
                self.assertEqual(rc, 2, err)
                lines = err.strip().splitlines()
                self.assertEqual(len(lines), 1, err)
                self.assertTrue(lines[0].startswith(expected), lines[0])

    def test_help_shows_no_default_braces_of_negated_flags(self):
        rc, out, err = run_alone(VALIDATE, "--help", timeout=60)
        self.assertEqual(rc, 0, err)
        self.assertNotIn("{false}", out)
        self.assertRegex(out, r"\n +--no-collectives +Skip the collective over every node")


class Counts(unittest.TestCase):
    def test_one_node_is_one_node(self):
        rc, out, err = run_alone(VALIDATE, "--simulate", "1", timeout=120)
        self.assertEqual(rc, 0, err)
        self.assertIn(", simulated: 1 node, ", out)
        self.assertIn("plan: 1 node, ", out)
        self.assertNotRegex(out, r"\b1 (node|round|step|rank|call)s\b")

    def test_one_step_is_one_step(self):
        rc, out, err = run_alone(PATTERNS, "--preset", "llama-3-8b", "--layers", "1", "-n", "1", "-w", "0")
        self.assertEqual(rc, 0, err)
        self.assertRegex(out, r"(?m)^# bench-patterns: ddp, tp 1 x pp 1 x dp 1 \(ep 1\), 1 step, no warm-up; .* on 1 rank$")
        self.assertRegex(out, r"(?m)^# 1 step measured, breakdown of rank 0 \(slowest\)$")
        self.assertNotRegex(out, r"\b1 (node|round|step|rank|call)s\b")


def built_with_cuda(binary):
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=60).stdout
    return any(line.startswith("backends: ") and "nccl" in line for line in out.splitlines())


def nvidia_driver_present():
    return any(os.path.exists(p) for p in ("/dev/nvidiactl", "/proc/driver/nvidia/version"))


class NoDriver(TempDirTest):
    """A CUDA build on a machine with no NVIDIA driver: CUDA's own words would be "CUDA
    driver version is insufficient for CUDA runtime version", as if an upgrade would help."""

    def setUp(self):
        super().setUp()
        if nvidia_driver_present():
            self.skipTest("this machine has an NVIDIA driver: tests/gpu covers it")
        if not built_with_cuda(P2P):
            self.skipTest("built without CUDA: nothing asks the CUDA runtime")

    def test_p2p_local_says_no_driver(self):
        rc, out, err = run_alone(P2P, "--local", timeout=120)
        self.assertEqual(rc, 3, err)
        self.assertEqual(err.strip(), "bench-p2p: error: no CUDA device: no NVIDIA driver/GPU found")

    def test_topology_says_no_driver(self):
        json_path = self.path("topo.json")
        rc, out, err = run_alone(TOPOLOGY, "--json", json_path, timeout=120)
        self.assertEqual(rc, 0, err)
        self.assertNotIn("insufficient", out + err)
        with open(json_path) as f:
            text = f.read()
        self.assertNotIn("insufficient", text)
        self.assertIn("CUDA runtime lists no GPU: no NVIDIA driver/GPU found", text)


if __name__ == "__main__":
    unittest.main(verbosity=2)
