"""The end-to-end comparison's own tools on real MPI ranks: bare-mpi-loop (its repeat=K,
its one-way traffic and its refusals) and bench/compare_with_bare_loop.py (its table, its exit codes, its
one-line errors). Timing is not judged here: only that each figure is there and sane. Where the
comparison must cope with output it cannot read or a launch that never ends, --build points at
shell scripts standing in for the two programs, launched through mpirun as the real ones are."""
import csv
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
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


def compare(*args, build=BUILD):
    return subprocess.run([sys.executable, SCRIPT, "--build", build, *args],
                          capture_output=True, text=True, timeout=300, env=ENV)


def prints(text):
    """A stand-in's body: rank 0 prints text, as the real programs print on rank 0 only."""
    return f'[ "${{OMPI_COMM_WORLD_RANK:-0}}" = 0 ] || exit 0\ncat <<\'END\'\n{text}END\n'


GOOD_CSV = "op,bytes,time_us\nallreduce,8,2.5\n"
GOOD_BARE = "allreduce 8 B: 2.0000 us\n"


def fake_build(test, collectives, bare_loop):
    """A --build directory whose bench/bench-collectives and bench/bare-mpi-loop are /bin/sh
    scripts with the given bodies (None: no such file); removed after the test."""
    build = tempfile.mkdtemp(prefix="commbench-fake-build-")
    test.addCleanup(shutil.rmtree, build)
    os.mkdir(os.path.join(build, "bench"))
    for name, body in (("bench-collectives", collectives), ("bare-mpi-loop", bare_loop)):
        if body is not None:
            path = os.path.join(build, "bench", name)
            with open(path, "w") as script:
                script.write("#!/bin/sh\n" + body)
            os.chmod(path, 0o755)
    return build


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
        # Rank 1's one-way messages, each of oneway-bytes, reach rank 0 before every loop:
        # rank 0 counts what it received and says so on stderr.
        for extras, messages, size in ((["oneway=1"], 1, 4), (["oneway=3", "oneway-bytes=40"], 3, 40),
                                       (["oneway=2", "repeat=3"], 2, 4)):
            with self.subTest(extras=extras):
                p = bare("allgather", 8, 2000, "page", *extras)
                self.assertEqual(p.returncode, 0, p.stderr)
                loops = 3 if "repeat=3" in extras else 1
                match = re.fullmatch(r"allgather 8 B: ([0-9. ]+) us\n", p.stdout)
                self.assertIsNotNone(match, p.stdout)
                self.assertEqual(len(match.group(1).split()), loops, p.stdout)
                self.assertIn("bare-mpi-loop: rank 0 received %d one-way messages, %d bytes"
                              % (messages * loops, messages * loops * size), p.stderr)

    def test_oneway_needs_a_rank_1(self):
        p = subprocess.run([MPIEXEC, "-q", "--oversubscribe", "-np", "1", BARE, "allgather", "8", "100", "oneway=1"],
                           capture_output=True, text=True, timeout=120, env=ENV)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertTrue(p.stderr.strip().startswith(
            "bare-mpi-loop: oneway= sends from rank 1 to rank 0: it needs 2 ranks (usage: bare-mpi-loop"), p.stderr)

    def test_bad_arguments_are_one_line_naming_them_and_exit_2(self):
        whole = "takes a whole number from"
        for arguments, why in (
                (["allgather", "8", "100", "repeat=0"], "'repeat=0': repeat= " + whole + " 1 to 1000"),
                (["allgather", "8", "100", "repeat=2x"], "'repeat=2x': repeat= " + whole + " 1 to 1000"),
                (["allgather", "8", "100", "repeat="], "'repeat=': repeat= " + whole + " 1 to 1000"),
                (["allgather", "8", "100", "repeat=99999999999999999999"],
                 "'repeat=99999999999999999999': repeat= " + whole + " 1 to 1000"),
                (["allgather", "8", "100", "pages"], "'pages' is not an option"),
                (["allgather", "8", "100", "oneway=-1"], "'oneway=-1': oneway= " + whole + " 0 to 1000000"),
                (["allgather", "8", "100", "oneway=x"], "'oneway=x': oneway= " + whole + " 0 to 1000000"),
                (["allgather", "8", "100", "oneway=1", "oneway-bytes=0"],
                 "'oneway-bytes=0': oneway-bytes= " + whole + " 1 to 1048576"),
                (["allgather", "8", "100", "oneway=1", "oneway-bytes=2000000"],
                 "'oneway-bytes=2000000': oneway-bytes= " + whole + " 1 to 1048576"),
                (["allgather", "8", "100", "oneway-bytes=40"], "oneway-bytes= needs oneway=K with K >= 1"),
                (["alltoall", "8", "100"], "'alltoall' is not one of the four operations"),
                (["allgather", "x", "100"], "BYTES 'x' is not a positive whole number up to 4294967296"),
                (["allgather", "8x", "100"], "BYTES '8x' is not a positive whole number up to 4294967296"),
                (["allgather", "8589934592", "100"],
                 "BYTES '8589934592' is not a positive whole number up to 4294967296"),
                (["allgather", "8", "0"], "ITERATIONS '0' is not a positive whole number up to 1000000000"),
                (["allgather", "8", "-5"], "ITERATIONS '-5' is not a positive whole number up to 1000000000"),
                (["allgather", "8"], "an operation, BYTES and ITERATIONS are needed")):
            with self.subTest(arguments=arguments):
                p = bare(*arguments)
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                self.assertEqual(p.stdout, "")
                lines = p.stderr.strip().splitlines()
                self.assertEqual(len(lines), 1, p.stderr)
                self.assertTrue(lines[0].startswith("bare-mpi-loop: " + why + " (usage: bare-mpi-loop "), lines[0])


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
            (["--before", "/nonexistent"], "--before /nonexistent: no bench/bench-collectives there"),
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

    def test_a_missing_bare_loop_is_one_line_and_exit_2(self):
        build = fake_build(self, prints(GOOD_CSV), None)
        p = compare("--launches", "1", "--ops", "allreduce", "--sizes", "8 B", build=build)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertEqual(p.stdout, "")
        self.assertEqual(p.stderr.strip(),
                         f"compare_with_bare_loop.py: error: --build {build}: no bench/bare-mpi-loop there")

    def test_the_stand_ins_give_a_table_when_their_output_is_good(self):
        # The control for the cases below: with readable output the stand-ins make a row.
        build = fake_build(self, prints(GOOD_CSV), prints(GOOD_BARE))
        p = compare("--launches", "1", "--ops", "allreduce", "--sizes", "8 B", "--tolerance", "1000", build=build)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(table_rows(p.stdout)[0][:4], ["allreduce", "8 B", "2.000", "2.500"], p.stdout)

    def test_output_that_cannot_be_read_is_one_line_and_exit_3_naming_the_program(self):
        cases = [
            ("bench-collectives prints nothing", "", GOOD_BARE, "bench/bench-collectives --backend mpi"),
            ("no time_us column", "op,bytes,time\nallreduce,8,2.5\n", GOOD_BARE, "bench/bench-collectives"),
            ("a header and no row", "op,bytes,time_us\n", GOOD_BARE, "bench/bench-collectives"),
            ("a short row", "op,bytes,time_us\nallreduce,8\n", GOOD_BARE, "bench/bench-collectives"),
            ("time_us not a number", "op,bytes,time_us\nallreduce,8,n/a\n", GOOD_BARE, "bench/bench-collectives"),
            ("bare-mpi-loop prints garbage", GOOD_CSV, "garbage\n", "bench/bare-mpi-loop allreduce 8"),
            ("bare-mpi-loop prints no time", GOOD_CSV, "allreduce 8 B: . us\n", "bench/bare-mpi-loop"),
        ]
        for what, collectives, bare_loop, named in cases:
            with self.subTest(what):
                build = fake_build(self, prints(collectives), prints(bare_loop))
                line = self.one_line_exit_3(build)
                self.assertTrue(line.startswith("compare_with_bare_loop.py: error: "), line)
                self.assertIn(named, line)
                self.assertIn("in its output", line)

    def test_oneway_too_launches_the_bare_loop_with_oneway_1(self):
        # The stand-in bare loop logs its arguments: --oneway-too must launch it once plain
        # and once with oneway=1 per launch, and the oneway column reads the second kind.
        log = os.path.join(tempfile.mkdtemp(prefix="commbench-args-"), "bare-args.txt")
        self.addCleanup(shutil.rmtree, os.path.dirname(log))
        bare_loop = (f'[ "${{OMPI_COMM_WORLD_RANK:-0}}" = 0 ] || exit 0\necho "$*" >> {log}\n'
                     'case "$*" in *oneway=1*) echo "allreduce 8 B: 4.0000 us";; *) echo "allreduce 8 B: 2.0000 us";; esac\n')
        build = fake_build(self, prints(GOOD_CSV), bare_loop)
        p = compare("--launches", "2", "--ops", "allreduce", "--sizes", "8 B", "--oneway-too", "--tolerance", "1000",
                    build=build)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(log) as f:
            calls = [line.split() for line in f.read().splitlines()]
        self.assertEqual(sorted("oneway=1" in call for call in calls), [False, False, True, True], calls)
        row = table_rows(p.stdout)[0]
        self.assertEqual(row[-2:], ["4.000", "-37.5 %"])  # bench-collectives 2.5 against 4.0

    def test_launch_log_has_every_launch_of_every_program(self):
        # With --oneway-too and --before, each launch round runs four programs; the log
        # holds each one's time under its name, in the order they ran.
        build = fake_build(self, prints(GOOD_CSV), prints(GOOD_BARE))
        before = fake_build(self, prints("op,bytes,time_us\nallreduce,8,3\n"), None)
        log = os.path.join(tempfile.mkdtemp(prefix="commbench-log-"), "launches.csv")
        self.addCleanup(shutil.rmtree, os.path.dirname(log))
        p = compare("--launches", "2", "--ops", "allreduce", "--sizes", "8 B", "--oneway-too", "--before", before,
                    "--launch-log", log, "--tolerance", "1000", build=build)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(log) as f:
            rows = list(csv.reader(f))
        self.assertEqual(rows[0], ["op", "size", "launch", "program", "time_us"])
        programs = ["bare", "bare oneway=1", "before", "bench-collectives"]
        times = {"bare": "2", "bare oneway=1": "2", "before": "3", "bench-collectives": "2.5"}
        expected = [["allreduce", "8 B", str(launch), program, times[program]]
                    for launch in (1, 2) for program in programs]
        self.assertEqual(rows[1:], expected)

    def test_a_launch_log_that_cannot_be_written_is_one_line_and_exit_2(self):
        build = fake_build(self, prints(GOOD_CSV), prints(GOOD_BARE))
        p = compare("--launches", "1", "--ops", "allreduce", "--sizes", "8 B", "--launch-log", "/nonexistent/log.csv",
                    build=build)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertEqual(p.stderr.strip(), "compare_with_bare_loop.py: error: --launch-log /nonexistent/log.csv: "
                                           "No such file or directory")

    def one_line_exit_3(self, build):
        """One 8 B allreduce comparison against the fake `build`: its exit 3 and one-line error."""
        p = compare("--launches", "1", "--ops", "allreduce", "--sizes", "8 B", build=build)
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        lines = p.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, p.stderr)
        return lines[0]

    def test_a_time_of_0_is_refused_not_divided_by(self):
        cases = [
            ("bare-mpi-loop", GOOD_CSV, "allreduce 8 B: 0.0000 us\n"),
            ("bench-collectives", "op,bytes,time_us\nallreduce,8,0\n", GOOD_BARE),
        ]
        for named, collectives, bare_loop in cases:
            with self.subTest(named):
                build = fake_build(self, prints(collectives), prints(bare_loop))
                line = self.one_line_exit_3(build)
                self.assertIn(f"bench/{named}", line)
                self.assertIn("printed a time of 0.0 us; the comparison needs one above 0", line)

    @unittest.skipUnless(os.path.isdir("/proc"), "finds the ranks' state in /proc")
    def test_a_timeout_is_exit_4_and_leaves_no_rank_running(self):
        # Both ranks of the stand-in record their pid and sleep: at the timeout the
        # script must end them too, not only mpirun. Its timeout is shortened in-process.
        build = fake_build(self, 'echo $$ >> "$(dirname "$0")/../pids"\nexec sleep 300\n', prints(GOOD_BARE))
        pids = os.path.join(build, "pids")
        code = ("import sys; sys.path.insert(0, sys.argv.pop(1)); import compare_with_bare_loop as c; "
                "c.LAUNCH_TIMEOUT_SECONDS = 8; sys.exit(c.main())")
        p = subprocess.run([sys.executable, "-c", code, os.path.dirname(os.path.abspath(SCRIPT)), "--build", build,
                            "--launches", "1", "--ops", "allreduce", "--sizes", "8 B"],
                           capture_output=True, text=True, timeout=120, env=ENV)
        ranks = []
        if os.path.exists(pids):
            with open(pids) as recorded:
                ranks = [int(line) for line in recorded.read().split()]

        def running(pid):
            try:
                with open(f"/proc/{pid}/stat") as stat:
                    return stat.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended
            except FileNotFoundError:
                return False
        deadline = time.monotonic() + 5  # a SIGKILL sent is not yet a process gone
        left = [pid for pid in ranks if running(pid)]
        while left and time.monotonic() < deadline:
            time.sleep(0.1)
            left = [pid for pid in left if running(pid)]
        for pid in left:
            os.kill(pid, signal.SIGKILL)  # not to leave them sleeping after a failure
        self.assertEqual(p.returncode, 4, p.stdout + p.stderr)
        lines = p.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertIn("bench/bench-collectives --backend mpi", lines[0])
        self.assertIn("no result within 8 s", lines[0])
        self.assertEqual(len(ranks), 2, ranks)
        self.assertEqual(left, [], "ranks still running after the timeout")

if __name__ == "__main__":
    unittest.main(verbosity=2)
