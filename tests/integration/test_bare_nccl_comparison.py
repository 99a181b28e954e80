"""bench/compare_with_bare_nccl.py (printed time against a bare NCCL loop) on a real
bench-collectives CSV from a GPU run, with bare-loop files written here; and bare-nccl-loop's
refusals, which need no GPU. The comparison itself runs on a GPU in scripts/gpu-session.sh."""
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(ROOT, "bench", "compare_with_bare_nccl.py")
SWEEP = os.path.join(ROOT, "results", "gpu", "h100-80gb-hbm3", "2026-11-26-60722e7", "sweep.csv")
BARE_LOOP = os.environ.get("COMMBENCH_BARE_NCCL_LOOP", "")


def printed_time(op, size):
    with open(SWEEP, newline="") as f:
        for row in csv.DictReader(f):
            if row["op"] == op and int(row["bytes"]) == size and row["placement"] == "out":
                return float(row["time_us"])
    raise KeyError((op, size))


class Comparison(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def bare_file(self, lines, name="bare.txt"):
        path = os.path.join(self.dir.name, name)
        with open(path, "w") as f:
            f.write("# bare-nccl-loop: NCCL 22803, allreduce, median of 5 runs\n" + "".join(l + "\n" for l in lines))
        return path

    def run_script(self, *args):
        return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, timeout=60)

    def table(self, out):
        return [[cell.strip() for cell in line.strip("|").split("|")] for line in out.splitlines()
                if line.startswith("| ") and not line.startswith("| op")]

    def test_cases_within_the_tolerance_pass_with_their_difference(self):
        at_8 = printed_time("allreduce", 8)
        at_1g = printed_time("allreduce", 1 << 30)
        bare = self.bare_file(["allreduce 8 %.3f" % (at_8 * 1.05), "allreduce 1073741824 %.3f" % (at_1g / 1.02)])
        p = self.run_script("--sweep", SWEEP, "--bare", bare)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        rows = self.table(p.stdout)
        self.assertEqual([r[:2] for r in rows], [["allreduce", "8 B"], ["allreduce", "1 GiB"]])
        self.assertAlmostEqual(float(rows[0][2]), at_8, places=3)
        self.assertEqual(rows[0][6], "%+.1f %%" % (100 * (at_8 - round(at_8 * 1.05, 3)) / round(at_8 * 1.05, 3)))
        self.assertEqual(rows[1][6], "+2.0 %")
        self.assertIn("medians of 1 bench-collectives launch(es) and 1 reading(s) of the bare loop per case", p.stdout)

    def test_medians_over_launches_decide_not_one_launch(self):
        # Three bare launches at 8 B: one far off (as a launch on a one-GPU VM can be), the
        # median with the printed time; the median is compared, the range shown.
        at_8 = printed_time("allreduce", 8)
        files = [self.bare_file(["allreduce 8 %.3f" % (at_8 * factor)], "bare-%d.txt" % i)
                 for i, factor in enumerate((1.0, 1.6, 0.98))]
        p = self.run_script("--sweep", SWEEP, "--sweep", SWEEP, *sum((["--bare", f] for f in files), []))
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        row = self.table(p.stdout)[0]
        self.assertAlmostEqual(float(row[4]), round(at_8, 3), places=3)
        self.assertEqual(row[5], "%.3f-%.3f" % (round(at_8 * 0.98, 3), round(at_8 * 1.6, 3)))
        self.assertIn("medians of 2 bench-collectives launch(es) and 3 reading(s) of the bare loop per case", p.stdout)
        # Against the one slow bare launch alone bench-collectives reads 37.5 % faster: the
        # launch spread, never a failure of the harness.
        one = self.run_script("--sweep", SWEEP, "--bare", files[1])
        self.assertEqual(one.returncode, 0, one.stdout)
        self.assertIn("-37.5 % (faster)", one.stdout)

    def test_a_case_outside_the_tolerance_is_exit_1_and_marked(self):
        bare = self.bare_file(["allgather 1048576 %.3f" % (printed_time("allgather", 1 << 20) / 1.25)])
        p = self.run_script("--sweep", SWEEP, "--bare", bare, "--tolerance", "0.1")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("+25.0 % **outside**", p.stdout)
        self.assertIn("1 case(s) differ from the bare loop by more than 10 %", p.stdout)
        self.assertEqual(self.run_script("--sweep", SWEEP, "--bare", bare, "--tolerance", "0.3").returncode, 0)

    def test_slower_within_the_bare_loops_own_spread_passes(self):
        # The bare loop read 0.8 to 1.0 of bench-collectives' time over three launches
        # (a 22 % spread around its median 0.9): +11 % slower is inside that, +30 % is not.
        at_1m = printed_time("allgather", 1 << 20)
        files = [self.bare_file(["allgather 1048576 %.3f" % (at_1m * factor)], "b-%d.txt" % i)
                 for i, factor in enumerate((0.8, 0.9, 1.0))]
        p = self.run_script("--sweep", SWEEP, *sum((["--bare", f] for f in files), []), "--tolerance", "0.1")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(self.table(p.stdout)[0][7], "+22.2 %")
        slow = [self.bare_file(["allgather 1048576 %.3f" % (at_1m * factor)], "s-%d.txt" % i)
                for i, factor in enumerate((0.76, 0.77, 0.78))]
        q = self.run_script("--sweep", SWEEP, *sum((["--bare", f] for f in slow), []), "--tolerance", "0.1")
        self.assertEqual(q.returncode, 1, q.stdout + q.stderr)
        self.assertIn("**outside**", q.stdout)

    def test_launches_in_a_slow_state_are_no_harness_cost_the_fastest_launch_tells(self):
        # The H200 run's own files: five launches of each program, interleaved. At 4 KiB and
        # 256 KiB broadcast, three of bench-collectives' launches and two of the bare loop's
        # landed in the slow state (5.7 to 6.5 us against 4.5), so the medians are 31 % and
        # 33 % apart, beyond the bare loop's spread; the fastest launches are within 1.2 %.
        run = os.path.join(ROOT, "results", "gpu", "h200", "2026-11-28-7661eef", "bare-nccl")
        sweeps = [os.path.join(run, "commbench-%d.csv" % launch) for launch in range(1, 6)]

        def arguments(sweep_paths):
            args = []
            for launch, sweep in enumerate(sweep_paths, start=1):
                args += ["--sweep", sweep]
                args += sum((["--bare", os.path.join(run, "%s-%d.txt" % (op, launch))]
                             for op in ("allreduce", "allgather", "reducescatter", "broadcast")), [])
            return args

        args = arguments(sweeps)
        p = self.run_script(*args)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        rows = {(r[0], r[1]): r for r in self.table(p.stdout)}
        self.assertEqual(len(rows), 24)
        self.assertEqual(rows[("broadcast", "4 KiB")][6], "+30.7 % (median only)")
        self.assertEqual(rows[("broadcast", "4 KiB")][8], "-0.2 %")
        self.assertNotIn("**outside**", p.stdout)
        # The same launches with bench-collectives 12 % slower in every one: outside.
        slower = [os.path.join(self.dir.name, "slow-%d.csv" % launch) for launch in range(1, 6)]
        for source, path in zip(sweeps, slower):
            with open(source, newline="") as f, open(path, "w") as out:
                reader = csv.DictReader(f)
                writer = csv.DictWriter(out, fieldnames=reader.fieldnames)
                writer.writeheader()
                for row in reader:
                    if (row["op"], row["bytes"]) == ("broadcast", "4096"):
                        row["time_us"] = "%.3f" % (float(row["time_us"]) * 1.12)
                    writer.writerow(row)
        q = self.run_script(*arguments(slower))
        self.assertEqual(q.returncode, 1, q.stdout + q.stderr)
        outside = [r for r in self.table(q.stdout) if "**outside**" in r[6]]
        self.assertEqual([r[:2] for r in outside], [["broadcast", "4 KiB"]])
        self.assertIn("the fastest launches too", q.stdout)

    def out_float_cases(self, path):
        with open(path, newline="") as f:
            return sorted((r["op"], int(r["bytes"])) for r in csv.DictReader(f)
                          if r["placement"] == "out" and r["dtype"] == "float")

    def scaled_sweep(self, name, factor, op, size):
        """A copy of SWEEP with the time of (op, size) out-of-place float multiplied by factor."""
        path = os.path.join(self.dir.name, name)
        with open(SWEEP, newline="") as f, open(path, "w", newline="") as out:
            reader = csv.DictReader(f)
            writer = csv.DictWriter(out, fieldnames=reader.fieldnames)
            writer.writeheader()
            for row in reader:
                if (row["op"], int(row["bytes"]), row["placement"], row["dtype"]) == (op, size, "out", "float"):
                    row["time_us"] = "%.3f" % (float(row["time_us"]) * factor)
                writer.writerow(row)
        return path

    def test_against_reference_sweeps_every_case_is_compared_under_the_references_name(self):
        # The plugin on/off comparison: the same sweep on both sides reads +0.0 % everywhere.
        p = self.run_script("--sweep", SWEEP, "--reference-sweep", SWEEP, "--reference", "plugin-off sweep")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("| plugin-off sweep (us) |", p.stdout.splitlines()[0])
        rows = self.table(p.stdout)
        cases = self.out_float_cases(SWEEP)
        self.assertEqual(len(rows), len(cases))
        self.assertEqual({r[6] for r in rows}, {"+0.0 %"})
        self.assertIn("medians of 1 bench-collectives launch(es) and 1 reading(s) of the plugin-off sweep per case",
                      p.stdout)

    def test_slower_than_the_reference_sweeps_beyond_their_spread_is_exit_1(self):
        # Three reference launches, 1 GiB allreduce within 0.4 % of each other; the sweep
        # compared reads 3 % slower there: outside a 2 % tolerance, inside a 5 % one.
        size = 1 << 30
        reference = [self.scaled_sweep("off-%d.csv" % i, factor, "allreduce", size)
                     for i, factor in enumerate((1.0, 1.002, 0.998))]
        slower = self.scaled_sweep("on.csv", 1.03, "allreduce", size)
        args = ["--sweep", slower, *sum((["--reference-sweep", r] for r in reference), []),
                "--reference", "plugin-off sweep"]
        p = self.run_script(*args, "--tolerance", "0.02")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        outside = [r for r in self.table(p.stdout) if "**outside**" in r[6]]
        self.assertEqual([r[:2] for r in outside], [["allreduce", "1 GiB"]])
        self.assertEqual(outside[0][6], "+3.0 % **outside**")
        self.assertIn("1 case(s) differ from the plugin-off sweep by more than 2 %", p.stdout)
        self.assertEqual(self.run_script(*args, "--tolerance", "0.05").returncode, 0)

    def test_against_reference_sweeps_the_compared_sides_own_spread_counts_too(self):
        # Plugin off: three launches within 0.4 % at 1 GiB; plugin on: three launches at +1 %,
        # +3 % and +6 % (median +3 %, a 4.9 % spread): outside 2 %, inside that spread.
        size = 1 << 30
        reference = [self.scaled_sweep("off-%d.csv" % i, factor, "allreduce", size)
                     for i, factor in enumerate((1.0, 1.002, 0.998))]
        compared = [self.scaled_sweep("on-%d.csv" % i, factor, "allreduce", size)
                    for i, factor in enumerate((1.01, 1.03, 1.06))]
        p = self.run_script(*sum((["--sweep", c] for c in compared), []),
                            *sum((["--reference-sweep", r] for r in reference), []), "--tolerance", "0.02")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        row = [r for r in self.table(p.stdout) if r[:2] == ["allreduce", "1 GiB"]][0]
        self.assertEqual(row[6], "+3.0 %")
        self.assertEqual(row[7], "+4.9 %")

    def test_a_bare_loop_and_reference_sweeps_together_are_refused(self):
        bare = self.bare_file(["allreduce 8 1.0"])
        p = self.run_script("--sweep", SWEEP, "--bare", bare, "--reference-sweep", SWEEP)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertIn("--reference-sweep: not allowed with argument --bare", p.stderr)
        q = self.run_script("--sweep", SWEEP)
        self.assertEqual(q.returncode, 2, q.stdout + q.stderr)
        self.assertIn("one of the arguments --bare --reference-sweep is required", q.stderr)

    def test_bad_inputs_are_one_line_and_exit_2(self):
        missing = self.bare_file(["allreduce 12 1.0"])
        garbage = self.bare_file(["allreduce eight 1.0"], "garbage.txt")
        empty = self.bare_file([], "empty.txt")  # the loop's header, then nothing: it failed
        zero = self.bare_file(["allreduce 8 0.000"], "zero.txt")
        binary = os.path.join(self.dir.name, "binary.txt")
        with open(binary, "wb") as f:
            f.write(b"\xff\xfe\x00allreduce 8 1.0\n")
        nan_sweep = os.path.join(self.dir.name, "nan.csv")
        with open(nan_sweep, "w") as f:
            f.write("op,placement,dtype,bytes,time_us\nallreduce,out,float,8,nan\n")
        for args, names in ((["--sweep", SWEEP, "--bare", missing], "no out-of-place float allreduce row of 12 bytes"),
                            (["--sweep", SWEEP, "--bare", garbage], "garbage.txt: not bare-nccl-loop output"),
                            (["--sweep", SWEEP, "--bare", os.path.join(self.dir.name, "absent.txt")],
                             "absent.txt: No such file"),
                            (["--sweep", garbage, "--bare", missing], "garbage.txt: not a bench-collectives CSV"),
                            (["--sweep", SWEEP, "--bare", empty], "empty.txt: no timing in it"),
                            (["--sweep", SWEEP, "--bare", zero], "zero.txt: no timing in it, or one that is not positive"),
                            (["--sweep", SWEEP, "--bare", missing, "--tolerance", "0"],
                             "--tolerance: 0 is not between 0 and 10"),
                            (["--sweep", SWEEP, "--bare", missing, "--tolerance", "abc"],
                             "argument --tolerance: invalid float value: 'abc'"),
                            (["--bare", missing], "the following arguments are required: --sweep"),
                            (["--sweep", SWEEP, "--bare", binary], "binary.txt: not bare-nccl-loop output (not text)"),
                            (["--sweep", binary, "--bare", missing], "binary.txt: not a bench-collectives CSV"),
                            (["--sweep", nan_sweep, "--bare", missing],
                             "nan.csv: a time_us of nan for allreduce at 8 bytes; the comparison needs one above 0")):
            p = self.run_script(*args)
            self.assertEqual(p.returncode, 2, (args, p.stdout, p.stderr))
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
            self.assertIn(names, p.stderr)


@unittest.skipUnless(BARE_LOOP, "built without NCCL: no bare-nccl-loop")
class BareNcclLoop(unittest.TestCase):
    def run_loop(self, *args):
        return subprocess.run([BARE_LOOP, *args], capture_output=True, text=True, timeout=120)

    def test_refusals_name_what_is_wrong_and_exit_2(self):
        sizes = "sizes are positive multiples of 4 bytes, comma-separated"
        for args, why in (([], "an operation and sizes are needed"),
                          (["alltoall", "8"], "'alltoall' is not one of the four operations"),
                          (["allreduce", "8,6"], "'8,6': " + sizes),
                          (["allreduce", "8,"], "'8,': " + sizes),
                          (["allreduce", "-8"], "'-8': " + sizes),
                          (["allreduce", " 8"], "' 8': " + sizes),
                          (["allreduce", "99999999999999999999996"], "'99999999999999999999996': " + sizes),
                          (["allreduce", "8", "repeats=0"], "'repeats=0': repeats=R with R from 1 to 1000")):
            p = self.run_loop(*args)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            lines = p.stderr.splitlines()
            self.assertEqual(len(lines), 1, lines)
            self.assertTrue(lines[0].startswith("bare-nccl-loop: " + why + " (usage: bare-nccl-loop "), lines)
            self.assertEqual(p.stdout, "")

    def test_without_a_gpu_it_is_one_line_and_exit_3(self):
        smi = shutil.which("nvidia-smi")
        if smi and subprocess.run([smi, "-L"], capture_output=True).returncode == 0:
            self.skipTest("a GPU is here: the loop would run")
        p = self.run_loop("allreduce", "8")
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertTrue(p.stderr.startswith("bare-nccl-loop: "), p.stderr)


if __name__ == "__main__":
    unittest.main()
