"""The end-to-end comparison's own tools on real MPI ranks: bare-mpi-loop (its repeat=K
and its refusals) and bench/compare_with_bare_loop.py (its table, its exit codes, its
one-line errors). Timing is not judged here: only that each figure is there and sane."""
import os
import re
import subprocess
import sys
import unittest

BUILD = os.environ.get("COMMBENCH_BUILD_DIR", "build")
BARE = os.path.join(BUILD, "bench", "bare-mpi-loop")
MPIEXEC = os.environ.get("COMMBENCH_MPIEXEC", "mpirun")
SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "compare_with_bare_loop.py")
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_mpi_yield_when_idle="1")


def bare(*args):
    return subprocess.run([MPIEXEC, "-q", "--oversubscribe", "-np", "2", BARE, *map(str, args)],
                          capture_output=True, text=True, timeout=120, env=ENV)


def compare(*args):
    return subprocess.run([sys.executable, SCRIPT, "--build", BUILD, *args],
                          capture_output=True, text=True, timeout=300, env=ENV)


class BareLoop(unittest.TestCase):
    def test_repeat_prints_one_time_per_loop(self):
        p = bare("allgather", 8, 2000, "page", "repeat=3")
        self.assertEqual(p.returncode, 0, p.stderr)
        match = re.fullmatch(r"allgather 8 B: ([0-9. ]+) us\n", p.stdout)
        self.assertIsNotNone(match, p.stdout)
        times = [float(t) for t in match.group(1).split()]
        self.assertEqual(len(times), 3, p.stdout)
        self.assertTrue(all(0 < t < 1e5 for t in times), times)

    def test_without_repeat_the_line_is_the_one_the_comparison_reads(self):
        p = bare("allreduce", 1024, 1000)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout, r"^allreduce 1024 B: [0-9.]+ us\n$")

    def test_bad_extras_are_one_usage_line_and_exit_2(self):
        for extra in ("repeat=0", "repeat=2x", "repeat=", "pages"):
            with self.subTest(extra=extra):
                p = bare("allgather", 8, 100, extra)
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                self.assertEqual(p.stdout, "")
                lines = p.stderr.strip().splitlines()
                self.assertEqual(len(lines), 1, p.stderr)
                self.assertTrue(lines[0].startswith("usage: bare-mpi-loop"), p.stderr)


def table_rows(text):
    rows = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| op ")]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows]


class Comparison(unittest.TestCase):
    def test_one_case_gives_medians_paired_difference_and_the_bare_range(self):
        p = compare("--launches", "2", "--ops", "allreduce", "--sizes", "8 B", "--tolerance", "1000")
        self.assertEqual(p.returncode, 0, p.stderr)
        header = next(line for line in p.stdout.splitlines() if line.startswith("| op "))
        self.assertIn("paired difference", header)
        self.assertIn("bare launches min-max (us)", header)
        rows = table_rows(p.stdout)
        self.assertEqual(len(rows), 1, p.stdout)
        op, size, bare_median, ours, difference, paired, bare_range = rows[0]
        self.assertEqual((op, size), ("allreduce", "8 B"))
        low, high = (float(x) for x in bare_range.split("-"))
        self.assertTrue(0 < low <= float(bare_median) <= high, rows[0])
        self.assertGreater(float(ours), 0)
        # The difference column is the two medians' ratio.
        self.assertAlmostEqual(float(difference.rstrip(" %")), (float(ours) / float(bare_median) - 1) * 100, delta=0.2)
        self.assertRegex(paired, r"^[+-][0-9.]+ %$")
        self.assertRegex(p.stdout, r"largest difference: [0-9.]+ % \(tolerance 100000 %\)")

    def test_a_difference_over_the_tolerance_is_exit_1(self):
        # Two programs' medians never agree to the last digit: a zero tolerance fails.
        p = compare("--launches", "1", "--ops", "broadcast", "--sizes", "8 B", "--tolerance", "0",
                    "--bare-buffers", "vector")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertEqual(len(table_rows(p.stdout)), 1, p.stdout)

    def test_bad_input_is_one_line_and_exit_2(self):
        cases = [
            (["--sizes", "3 B"], "--sizes: unknown size '3 B'"),
            (["--ops", "gather"], "--ops: unknown collective 'gather'"),
            (["--launches", "0"], "--launches and --ranks: must be at least 1"),
            (["--bare-buffers", "huge"], "--bare-buffers: invalid choice"),
            (["--before", "/nonexistent"], "--build/--before /nonexistent: no bench/bench-collectives there"),
        ]
        for args, expected in cases:
            with self.subTest(args=args):
                p = compare(*args)
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                self.assertEqual(p.stdout, "")
                lines = p.stderr.strip().splitlines()
                self.assertEqual(len(lines), 1, p.stderr)
                self.assertIn(expected, lines[0])

    def test_a_failed_launch_is_exit_3_naming_it(self):
        env = dict(ENV, PATH="/nonexistent")
        p = subprocess.run([sys.executable, SCRIPT, "--build", BUILD, "--launches", "1", "--ops", "allreduce",
                            "--sizes", "8 B"], capture_output=True, text=True, timeout=60, env=env)
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertEqual(p.stderr.strip(), "compare_with_bare_loop.py: error: mpirun not found on PATH")


if __name__ == "__main__":
    unittest.main(verbosity=2)
