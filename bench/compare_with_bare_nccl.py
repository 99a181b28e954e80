#!/usr/bin/env python3
"""bench-collectives' printed time next to a bare NCCL loop's (bare-nccl-loop) on the same
GPUs, as a user would check the harness on a GPU: several launches of each, interleaved by
the caller (bare, commbench, bare, ...), and for every (op, size) the bare loop timed, the
median of bench-collectives' time_us over its launches, the median of the bare loop's, each
one's range, the difference of the medians as a percentage of the bare loop's, and the
difference of the fastest launches. Prints a markdown table and exits 1 when
bench-collectives is slower than the bare loop by more than the case's bound (--tolerance,
or the bare loop's own launch-to-launch spread, (max - min) / median of its readings, where
that is larger) and its fastest launch is slower than the bare loop's fastest by more than
--tolerance. A cost the harness adds slows every launch, the fastest too; a process that
landed in a slow state (a small call's time moves by half or more from launch to launch,
in either program: results/gpu/h200/2026-11-28-2af8b41/spread-*.md) moves the medians of five
launches apart but not the fastest: such a case is marked "(median only)". Faster is never a
failure: a harness cannot make NCCL faster, so it is the launch spread, marked "(faster)". Exits 2 when a file is
missing or unreadable or a sweep lacks a timed case (one line naming the file). scripts/gpu-session.sh
runs it after five interleaved launches:

    python3 bench/compare_with_bare_nccl.py --sweep cb-1.csv --sweep cb-2.csv \
        --bare bare-allreduce-1.txt --bare bare-allreduce-2.txt

With --reference-sweep instead of --bare, the reference is other launches of bench-collectives
itself, every case of them compared the same way, the bound the larger of the two sides'
spreads (the same program runs on both): gpu-session.sh holds the sweeps with
commbench's NCCL profiler plugin against the same sweeps with NCCL_PROFILER_PLUGIN=none
(--reference "plugin-off sweep"), which tells whether recording NCCL's choices changes the times.

Why medians over launches: a small NCCL call's time moves by half or more from launch to
launch in either program (results/gpu/h100-80gb-hbm3/2026-11-26-acf6cba/launch-spread.txt).
"""
import argparse
import csv
import math
import statistics
import sys


def fail(message):
    print("compare_with_bare_nccl.py: " + message, file=sys.stderr)
    sys.exit(2)


def sweep_times(path):
    """(op, bytes) -> time_us of the out-of-place float rows of a bench-collectives CSV."""
    needed = {"op", "placement", "dtype", "bytes", "time_us"}
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(line for line in f if not line.startswith("#"))
            rows = list(reader)
    except OSError as error:
        fail("%s: %s" % (path, error.strerror))
    except (UnicodeDecodeError, csv.Error):
        fail("%s: not a bench-collectives CSV (not text, or not CSV)" % path)
    if not needed <= set(reader.fieldnames or []):
        fail("%s: not a bench-collectives CSV (needs op, placement, dtype, bytes, time_us)" % path)
    times = {}
    for row in rows:
        try:
            if row["placement"] == "out" and row["dtype"] == "float":
                time_us = float(row["time_us"])
                times[(row["op"], int(row["bytes"]))] = time_us
        except (KeyError, ValueError, TypeError):
            fail("%s: not a bench-collectives CSV (needs op, placement, dtype, bytes, time_us)" % path)
        else:
            # The same rule as the bare side's: a time the comparison can divide by and trust.
            if row["placement"] == "out" and row["dtype"] == "float" and not (math.isfinite(time_us) and time_us > 0):
                fail("%s: a time_us of %s for %s at %s bytes; the comparison needs one above 0" %
                     (path, row["time_us"], row["op"], row["bytes"]))
    return times


def bare_times(path):
    """[(op, bytes, us)] from bare-nccl-loop's output ('#' lines are its header)."""
    try:
        with open(path) as f:
            lines = [line.split() for line in f if line.strip() and not line.startswith("#")]
    except OSError as error:
        fail("%s: %s" % (path, error.strerror))
    except UnicodeDecodeError:
        fail("%s: not bare-nccl-loop output (not text)" % path)
    try:
        timings = [(op, int(size), float(us)) for op, size, us in lines]
    except ValueError:
        fail("%s: not bare-nccl-loop output ('OP BYTES MICROSECONDS' per line)" % path)
    if not timings or any(not (math.isfinite(us) and us > 0) for _, _, us in timings):
        fail("%s: no timing in it, or one that is not positive (did bare-nccl-loop fail?)" % path)
    return timings


def reference_timings(arguments):
    """[(path, [(op, bytes, us)])]: the bare loop's files, or the reference sweeps' timed cases."""
    if arguments.bare:
        return [(path, bare_times(path)) for path in arguments.bare]
    return [(path, [(op, size, us) for (op, size), us in sorted(sweep_times(path).items())])
            for path in arguments.reference_sweep]


def size_text(size):
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return "%d %s" % (size // scale, unit)
    return "%d B" % size


def range_text(values):
    return "%.3f-%.3f" % (min(values), max(values))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.error = lambda message: fail(message)  # one line, not argparse's usage block
    parser.add_argument("--sweep", action="append", required=True, help="a bench-collectives --csv output (repeat)")
    reference = parser.add_mutually_exclusive_group(required=True)
    reference.add_argument("--bare", action="append", help="a bare-nccl-loop output (repeat)")
    reference.add_argument("--reference-sweep", action="append",
                           help="a bench-collectives --csv output to compare against instead (repeat)")
    parser.add_argument("--reference", help="the reference's name in the table (default: bare loop, or reference)")
    parser.add_argument("--tolerance", type=float, default=0.10,
                        help="largest |median printed - median bare| / median bare accepted (default 0.10)")
    arguments = parser.parse_args()
    if not 0 < arguments.tolerance < 10:
        fail("--tolerance: %g is not between 0 and 10" % arguments.tolerance)
    name = arguments.reference or ("bare loop" if arguments.bare else "reference")
    sweeps = [(path, sweep_times(path)) for path in arguments.sweep]
    bare = {}
    for path, timings in reference_timings(arguments):
        for op, size, us in timings:
            for sweep_path, printed in sweeps:
                if (op, size) not in printed:
                    fail("%s: no out-of-place float %s row of %d bytes (timed in %s)" % (sweep_path, op, size, path))
            bare.setdefault((op, size), []).append(us)
    print("| op | size | bench-collectives (us) | its range | %s (us) | its range | difference | bound | fastest apart |"
          % name)
    print("|---|---|---|---|---|---|---|---|---|")
    outside = 0
    for op, size in sorted(bare):
        printed = [times[(op, size)] for _, times in sweeps]
        ours, theirs = statistics.median(printed), statistics.median(bare[(op, size)])
        difference = (ours - theirs) / theirs
        bound = max(arguments.tolerance, (max(bare[(op, size)]) - min(bare[(op, size)])) / theirs)
        if arguments.reference_sweep:  # the same program on both sides: either side's spread is noise
            bound = max(bound, (max(printed) - min(printed)) / ours)
        fastest = (min(printed) - min(bare[(op, size)])) / min(bare[(op, size)])
        slower = difference > bound and fastest > arguments.tolerance
        median_only = difference > bound and not slower  # the launches' states, not the harness
        mark = (" **outside**" if slower else " (median only)" if median_only else
                " (faster)" if difference < -bound else "")
        outside += slower
        print("| %s | %s | %.3f | %s | %.3f | %s | %+.1f %%%s | +%.1f %% | %+.1f %% |" %
              (op, size_text(size), ours, range_text(printed), theirs, range_text(bare[(op, size)]), 100 * difference,
               mark, 100 * bound, 100 * fastest))
    print("medians of %d bench-collectives launch(es) and %d reading(s) of the %s per case" %
          (len(sweeps), min(len(values) for values in bare.values()) if bare else 0, name))
    if outside:
        print("%d case(s) differ from the %s by more than %g %% (slower, beyond the %s's own spread, the "
              "fastest launches too)" % (outside, name, 100 * arguments.tolerance, name))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
