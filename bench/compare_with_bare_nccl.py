#!/usr/bin/env python3
"""bench-collectives' printed time next to a bare NCCL loop's (bare-nccl-loop) on the same
GPUs, as a user would check the harness on a GPU: for every (op, size) the bare loop timed,
the sweep row's time_us, the bare loop's median, and their difference as a percentage of
the bare loop. Prints a markdown table and exits 1 when a difference exceeds --tolerance,
2 when a file is missing or unreadable or the sweep lacks a timed case (one line naming
the file). scripts/gpu-session.sh runs it after the sweep:

    python3 bench/compare_with_bare_nccl.py sweep.csv bare-allreduce.txt bare-allgather.txt

One launch of each, not interleaved launches as compare_with_bare_loop.py does for MPI:
on a GPU the launch-to-launch spread of these figures has not been measured, so a
difference near the tolerance is a reason to look, not a verdict on its own.
"""
import argparse
import csv
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
    if not needed <= set(reader.fieldnames or []):
        fail("%s: not a bench-collectives CSV (needs op, placement, dtype, bytes, time_us)" % path)
    times = {}
    for row in rows:
        try:
            if row["placement"] == "out" and row["dtype"] == "float":
                times[(row["op"], int(row["bytes"]))] = float(row["time_us"])
        except (KeyError, ValueError, TypeError):
            fail("%s: not a bench-collectives CSV (needs op, placement, dtype, bytes, time_us)" % path)
    return times


def bare_times(path):
    """[(op, bytes, us)] from bare-nccl-loop's output ('#' lines are its header)."""
    try:
        with open(path) as f:
            lines = [line.split() for line in f if line.strip() and not line.startswith("#")]
    except OSError as error:
        fail("%s: %s" % (path, error.strerror))
    try:
        return [(op, int(size), float(us)) for op, size, us in lines]
    except ValueError:
        fail("%s: not bare-nccl-loop output ('OP BYTES MICROSECONDS' per line)" % path)


def size_text(size):
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return "%d %s" % (size // scale, unit)
    return "%d B" % size


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sweep", help="bench-collectives --csv output")
    parser.add_argument("bare", nargs="+", help="bare-nccl-loop output files")
    parser.add_argument("--tolerance", type=float, default=0.10,
                        help="largest |printed - bare| / bare accepted (default 0.10)")
    arguments = parser.parse_args()
    if not 0 < arguments.tolerance < 10:
        fail("--tolerance: %g is not between 0 and 10" % arguments.tolerance)
    printed = sweep_times(arguments.sweep)
    print("| op | size | bench-collectives (us) | bare loop (us) | difference |")
    print("|---|---|---|---|---|")
    outside = 0
    for path in arguments.bare:
        for op, size, bare in bare_times(path):
            if (op, size) not in printed:
                fail("%s: no out-of-place float %s row of %d bytes (timed in %s)" % (arguments.sweep, op, size, path))
            difference = (printed[(op, size)] - bare) / bare
            mark = "" if abs(difference) <= arguments.tolerance else " **outside**"
            outside += bool(mark)
            print("| %s | %s | %.3f | %.3f | %+.1f %%%s |" % (op, size_text(size), printed[(op, size)], bare,
                                                            100 * difference, mark))
    if outside:
        print("%d case(s) differ from the bare loop by more than %g %%" % (outside, 100 * arguments.tolerance))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
