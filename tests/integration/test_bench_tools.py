"""The end-to-end comparison's own tools on real MPI ranks: bare-mpi-loop (its repeat=K,
its one-way traffic and its refusals) and bench/compare_with_bare_loop.py (its table, its exit codes, its
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

    def test_oneway_traffic_runs_before_every_loop(self):
        # Rank 1's one-way messages must be received by rank 0 before each loop: were a
        # send or a receive missing, one rank would wait forever (the timeout fails it).
        for extras in (["oneway=1"], ["oneway=3", "oneway-bytes=40"], ["oneway=2", "repeat=3"]):
            with self.subTest(extras=extras):
                p = bare("allgather", 8, 2000, "page", *extras)
                self.assertEqual(p.returncode, 0, p.stderr)
                loops = 3 if "repeat=3" in extras else 1
                match = re.fullmatch(r"allgather 8 B: ([0-9. ]+) us\n", p.stdout)
                self.assertIsNotNone(match, p.stdout)
                self.assertEqual(len(match.group(1).split()), loops, p.stdout)

    def test_oneway_needs_a_rank_1(self):
        p = subprocess.run([MPIEXEC, "-q", "--oversubscribe", "-np", "1", BARE, "allgather", "8", "100", "oneway=1"],
                           capture_output=True, text=True, timeout=120, env=ENV)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertTrue(p.stderr.strip().startswith("usage: bare-mpi-loop"), p.stderr)

    def test_bad_extras_are_one_usage_line_and_exit_2(self):
        for extra in ("repeat=0", "repeat=2x", "repeat=", "pages", "oneway=-1", "oneway=x", "oneway-bytes=0",
                      "oneway-bytes=2000000"):
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


def assert_ratio_cell(test, cell, numerator, denominator):
    """A '+12.3 %' cell is numerator/denominator - 1 of the unrounded medians; the table
    prints those to 3 decimals, so the check allows what that rounding can move the ratio
    (for sub-microsecond medians it is more than the cell's own 0.05)."""
    printed = float(cell.rstrip(" %"))
    half_digit = 0.0005
    low = ((numerator - half_digit) / (denominator + half_digit) - 1) * 100 - 0.05
    high = ((numerator + half_digit) / (denominator - half_digit) - 1) * 100 + 0.05
    test.assertTrue(low <= printed <= high, f"{cell} is not {numerator}/{denominator} - 1 (range {low:.2f} to {high:.2f})")


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
        assert_ratio_cell(self, difference, float(ours), float(bare_median))
        self.assertRegex(paired, r"^[+-][0-9.]+ %$")
        self.assertRegex(p.stdout, r"largest difference: [0-9.]+ % \(tolerance 100000 %\)")

    def test_oneway_too_adds_the_bare_loop_in_the_other_state(self):
        p = compare("--launches", "2", "--ops", "allgather", "--sizes", "8 B", "--tolerance", "1000",
                    "--oneway-too")
        self.assertEqual(p.returncode, 0, p.stderr)
        header = next(line for line in p.stdout.splitlines() if line.startswith("| op "))
        self.assertTrue(header.endswith("| bare oneway=1 median (us) | vs bare oneway=1 |"), header)
        separator = next(line for line in p.stdout.splitlines() if line.startswith("|---"))
        self.assertEqual(separator.count("---"), 9, separator)
        rows = table_rows(p.stdout)
        self.assertEqual(len(rows), 1, p.stdout)
        ours, oneway_median, versus = float(rows[0][3]), float(rows[0][7]), rows[0][8]
        self.assertGreater(oneway_median, 0)
        assert_ratio_cell(self, versus, ours, oneway_median)

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
            (["--ranks", "1", "--oneway-too"], "--oneway-too: needs --ranks 2 or more"),
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
