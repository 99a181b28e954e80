"""bench-collectives' bad input: each flag error is one line, exit 2 and no file, refused
before MPI starts where it does not depend on the ranks (then checked without mpirun);
and the threshold rules and baselines (--threshold, --thresholds, --baseline) against real
runs on 2 ranks."""
import csv
import glob
import io
import json
import os
import stat
import subprocess
import unittest

from test_bench_collectives import BIN, TempDirTest, run


# (arguments, text the single error line must contain). Each must exit 2, print one line,
# and leave no result file behind.
BAD_INPUTS = [
    (["--soak", "soon"], "--soak: 'soon' is not a length of time (like 90s, 20m, 2h)"),
    (["--soak", "0"], "--soak: must be more than 0 and at most a year (got 0)"),
    (["--soak-interval", "5"], "--soak-interval: applies to --soak only"),
    (["--soak", "5s", "-e", "8"], "--soak: watches the busbw between ranks, and one rank has none"),
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
    (["-e", "1T"], "-e/--max-bytes: allreduce float of 8589934592 bytes (8GiB) needs 2147483648 elements in one MPI "
                   "call, more than its 2^31-1; the largest size that works is 8589934588 bytes (-e 4GiB)"),
    # Just past the limit: refused before anything is allocated or measured.
    (["-b", "8589934592", "-e", "8589934592", "--op", "allreduce"],
     "-e/--max-bytes: allreduce float of 8589934592 bytes (8GiB) needs 2147483648 elements"),
    (["-e", "1.5M"], "-e/--max-bytes: '1.5M' has a fraction; sizes are whole numbers of bytes or units: write 1536K"),
    (["--max-byte", "1M"], "bench-collectives: error: unknown flag --max-byte (did you mean --max-bytes?) (see --help)"),
    (["--max-byte=1M"], "unknown flag --max-byte (did you mean --max-bytes?)"),
    (["--op", "allreduc"], "--op: unknown value 'allreduc' (did you mean allreduce?); expected one of: "),
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
    (["-n", "2", "-n", "3"], "--iters: given 2 times; give it once (see --help)"),
]


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

    def test_a_folder_that_takes_no_file_is_found_before_the_sweep(self):
        # /proc exists and root may "write" there by access(); creating the file says no.
        rc, out, err = run_alone("-b", "8", "-e", "8", "--json", "/proc/commbench.json")
        self.assertEqual(rc, 2, err)
        self.assertEqual(err.strip(), "bench-collectives: error: --json /proc/commbench.json: cannot write in /proc "
                                      "(No such file or directory)")
        self.assertEqual(out, "")

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
        rc, out, err = run(2, *self.SWEEP, "--thresholds", fifo, "-T", "2", timeout=60)
        self.assertEqual(rc, 4, err)  # how soon: test_deadlines, label speed
        self.assertIn("reading --thresholds/--baseline did not complete within 2 s", err)


if __name__ == "__main__":
    unittest.main(verbosity=2)
