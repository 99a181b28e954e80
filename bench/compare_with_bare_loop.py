#!/usr/bin/env python3
"""End-to-end comparison of bench-collectives' printed time with a bare loop of the same
MPI call in its own process (bare-mpi-loop), as a user would check the harness: several
launches of each, interleaved (bare, commbench, bare, ...) so drift in the machine hits
both alike, medians compared. Both programs' buffers start on a page boundary. Prints a
markdown table (the medians, the launch-by-launch difference and the bare loop's range)
and exits 1 when a case's medians differ by more than --tolerance; 2 with one line for bad
input or a missing program under --build; 3 with one line when a launch fails or its
output has no time above 0 that can be read; 4 when a launch gives no result within
LAUNCH_TIMEOUT_SECONDS (every process of that launch is then killed, the ranks included).

    python3 bench/compare_with_bare_loop.py --build build --ranks 2 --launches 5

With --before OTHER_BUILD it also launches that build's bench-collectives in the same
interleaving (bare, before, commbench, ...): a before/after check of a change, end to end.

With --oneway-too it also launches the bare loop after one 4-byte message from rank 1 to
rank 0 (`bare-mpi-loop ... oneway=1`): at small sizes one-way traffic before a loop, such
as a harness's set-up broadcasts, decides which of two steady states the loop runs in
(docs/methodology.md, "Two steady states of one loop"). The extra columns say whether
bench-collectives reads like the bare loop in that other state. The verdict stays the
plain bare loop's.
"""
import argparse
import csv
import io
import math
import os
import re
import signal
import statistics
import subprocess
import sys

SIZES = {"8 B": 8, "1 KiB": 1024, "1 MiB": 1 << 20, "16 MiB": 16 << 20, "64 MiB": 64 << 20}
OPS = ["allreduce", "allgather", "reducescatter", "broadcast"]


# How glibc's allocator behaves in every launched process (docs/methodology.md, "Memory
# that stays mapped"): "default" is glibc's own; "steady" keeps freed memory mapped, as
# bench-collectives does by default. Both sides of a comparison get the same.
ALLOCATOR_ENV = {
    "default": {"COMMBENCH_MALLOC": "default"},
    "steady": {"GLIBC_TUNABLES": "glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=4611686018427387904"},
}
allocator = "steady"


LAUNCH_TIMEOUT_SECONDS = 600


# Exit codes as the commbench programs use them: 2 bad input, 3 a launch failed or its output
# could not be read, 4 timeout.
def fail(code, message):
    print(f"compare_with_bare_loop.py: error: {message}", file=sys.stderr)
    sys.exit(code)


def kill_session(session):
    """SIGKILL to every process of the session that mpirun leads (it starts in one of its
    own, so its pid is the session's id). Its process group alone is not enough: Open MPI
    4.1 puts each rank in a process group of its own, within mpirun's session."""
    try:
        os.killpg(session, signal.SIGKILL)
    except OSError:
        pass
    try:
        pids = [int(entry) for entry in os.listdir("/proc") if entry.isdigit()]
    except OSError:
        return  # no /proc: the process group is all that can be reached
    for pid in pids:
        try:
            if os.getsid(pid) == session:
                os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def launch(argv, env):
    """Runs argv in a session of its own and returns (exit status, stdout, stderr). On a
    timeout or Ctrl-C every process of that session goes, the ranks included: killing
    mpirun alone leaves them running."""
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                               start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=LAUNCH_TIMEOUT_SECONDS)
    except BaseException as error:
        kill_session(process.pid)
        process.wait()
        if isinstance(error, KeyboardInterrupt):
            # In a session of their own the launched processes do not get the terminal's
            # SIGINT; once they are gone, this script ends by it as it would have.
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)
        raise
    return process.returncode, stdout, stderr


def mpirun(ranks, *command):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", **ALLOCATOR_ENV[allocator])
    exported = [arg for name in ALLOCATOR_ENV[allocator] for arg in ("-x", name)]
    what = " ".join(map(str, command))
    try:
        returncode, stdout, stderr = launch(["mpirun", "-q", "--oversubscribe", *exported, "-np", str(ranks),
                                             *map(str, command)], env)
    except FileNotFoundError:
        fail(3, "mpirun not found on PATH")
    except subprocess.TimeoutExpired:
        fail(4, f"{what}: no result within {LAUNCH_TIMEOUT_SECONDS} s")
    if returncode != 0:
        last_line = (stderr.strip().splitlines() or ["no message"])[-1]
        fail(3, f"{what}: exit {returncode}: {last_line}")
    return stdout


def unreadable(command, text, expected):
    first_line = (text.strip().splitlines() or [""])[0][:80]
    fail(3, f"{' '.join(map(str, command))}: {expected} in its output (first line: {first_line!r})")


def positive(command, value):
    """A time the comparison can divide by: a zero (a time under the printed precision)
    or a negative one is refused, naming the program, instead of dividing by it."""
    if not (math.isfinite(value) and value > 0):
        fail(3, f"{' '.join(map(str, command))}: printed a time of {value} us; the comparison needs one above 0")
    return value


def bare_time(build, ranks, op, size, iterations, buffers, oneway=0):
    alignment = ["page"] if buffers == "page" else []
    extras = [f"oneway={oneway}"] if oneway else []
    command = [os.path.join(build, "bench", "bare-mpi-loop"), op, size, iterations, *alignment, *extras]
    text = mpirun(ranks, *command)
    match = re.search(r": ([0-9]+(?:\.[0-9]+)?) us$", text, re.MULTILINE)
    if match is None:
        unreadable(command, text, "no '<op> <bytes> B: <time> us' line")
    return positive(command, float(match.group(1)))


def commbench_time(build, ranks, op, size):
    command = [os.path.join(build, "bench", "bench-collectives"), "--backend", "mpi", "--op", op,
               "-b", size, "-e", size, "--format", "csv"]
    text = mpirun(ranks, *command)
    try:
        value = float(next(csv.DictReader(io.StringIO(text)))["time_us"])
    except (StopIteration, KeyError, TypeError, ValueError, csv.Error):
        unreadable(command, text, "no CSV row with a number in a time_us column")
    return positive(command, value)


def parse_arguments():
    """The command line, checked: every refusal is one line and exit 2."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.error = lambda message: fail(2, message)  # one line, not argparse's usage block
    parser.add_argument("--build", default="build")
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--launches", type=int, default=5)
    parser.add_argument("--tolerance", type=float, default=0.10)
    parser.add_argument("--ops", default=",".join(OPS))
    parser.add_argument("--sizes", default="8 B,1 KiB,1 MiB,16 MiB", help="names from: " + ", ".join(SIZES))
    parser.add_argument("--before", help="another build directory whose bench-collectives runs alongside")
    parser.add_argument("--malloc", choices=sorted(ALLOCATOR_ENV), default="steady",
                        help="glibc allocator behaviour in every launched process (default: steady)")
    # bench-collectives' host buffers start on a page boundary; a std::vector's wherever
    # malloc puts it (16-byte aligned). That alone can make a bare 16 MiB allgather markedly
    # slower (docs/performance.md, "End to end against a bare MPI loop"), so by default the
    # bare loop's buffers are page-aligned too: the comparison is of the harness, not of alignment.
    parser.add_argument("--bare-buffers", choices=["page", "vector"], default="page",
                        help="where the bare loop's buffers start: on a page boundary, as bench-collectives' "
                        "(default), or where std::vector puts them")
    parser.add_argument("--oneway-too", action="store_true",
                        help="also time the bare loop after one one-way message (bare-mpi-loop oneway=1)")
    # Medians hide which of a machine's states each launch ran in; the log shows them.
    parser.add_argument("--launch-log", metavar="FILE",
                        help="also write every launch's time to FILE as CSV (op,size,launch,program,time_us)")
    args = parser.parse_args()
    if args.launches < 1 or args.ranks < 1:
        parser.error("--launches and --ranks: must be at least 1")
    if args.oneway_too and args.ranks < 2:
        parser.error("--oneway-too: needs --ranks 2 or more (rank 1 sends to rank 0)")
    for op in args.ops.split(","):
        if op not in OPS:
            parser.error(f"--ops: unknown collective '{op}' (one of: {', '.join(OPS)})")
    for name in args.sizes.split(","):
        if name not in SIZES:
            parser.error(f"--sizes: unknown size '{name}' (names: {', '.join(SIZES)})")
    programs = [("--build", args.build, "bench-collectives"), ("--build", args.build, "bare-mpi-loop")]
    if args.before:
        programs.append(("--before", args.before, "bench-collectives"))
    for flag, build, program in programs:
        if not os.path.isfile(os.path.join(build, "bench", program)):
            parser.error(f"{flag} {build}: no bench/{program} there")
    return parser, args


def open_launch_log(parser, path):
    """The CSV writer of every launch's time (and its file), or (None, None) without --launch-log."""
    try:
        log_file = open(path, "w", newline="") if path else None
    except OSError as error:
        parser.error(f"--launch-log {path}: {error.strerror}")
    log = csv.writer(log_file) if log_file else None
    if log:
        log.writerow(["op", "size", "launch", "program", "time_us"])
    return log, log_file


def table_columns(args):
    # The table's columns after op and size, in order; each row fills them by name. The
    # paired difference and the bare range tell a bias from this machine's launch-to-launch
    # spread: the median of the launch-by-launch ratios (each bench-collectives launch
    # against the bare launch just before it) and how far the bare loop's own launches range.
    columns = ["bare loop median (us)"]
    columns += ["before median (us)", "before vs bare"] if args.before else []
    columns += ["bench-collectives median (us)", "difference", "paired difference", "bare launches min-max (us)"]
    columns += ["bare oneway=1 median (us)", "vs bare oneway=1"] if args.oneway_too else []
    return columns


def launch_times(args, op, name, iterations, log, log_file):
    """Each program's time per launch of op at size `name`: (bare, bare oneway=1, before, ours)."""
    size = SIZES[name]
    bare, oneway, before, ours = [], [], [], []
    for launch in range(1, args.launches + 1):
        timed = [("bare", bare, lambda: bare_time(args.build, args.ranks, op, size, iterations,
                                                  args.bare_buffers))]
        if args.oneway_too:
            timed.append(("bare oneway=1", oneway, lambda: bare_time(args.build, args.ranks, op, size,
                                                                     iterations, args.bare_buffers, 1)))
        if args.before:
            timed.append(("before", before, lambda: commbench_time(args.before, args.ranks, op, size)))
        timed.append(("bench-collectives", ours, lambda: commbench_time(args.build, args.ranks, op, size)))
        for program, times, run in timed:
            times.append(run())
            if log:
                log.writerow([op, name, launch, program, f"{times[-1]:.6g}"])
                log_file.flush()
    return bare, oneway, before, ours


def row_cells(args, bare, oneway, before, ours):
    """The table's cells of one op and size, by column, and bench-collectives' difference."""
    # Every time read is above 0 (positive()), so no median here is 0.
    b, c = statistics.median(bare), statistics.median(ours)
    difference = c / b - 1
    paired = statistics.median(ours[i] / bare[i] for i in range(args.launches)) - 1
    cells = {"bare loop median (us)": f"{b:.3f}", "bench-collectives median (us)": f"{c:.3f}",
             "difference": f"{difference * 100:+.1f} %", "paired difference": f"{paired * 100:+.1f} %",
             "bare launches min-max (us)": f"{min(bare):.3f}-{max(bare):.3f}"}
    if args.before:
        p = statistics.median(before)
        cells.update({"before median (us)": f"{p:.3f}", "before vs bare": f"{(p / b - 1) * 100:+.1f} %"})
    if args.oneway_too:
        o = statistics.median(oneway)
        cells.update({"bare oneway=1 median (us)": f"{o:.3f}",
                      "vs bare oneway=1": f"{(c / o - 1) * 100:+.1f} %"})
    return cells, difference


def main():
    parser, args = parse_arguments()
    global allocator
    allocator = args.malloc
    log, log_file = open_launch_log(parser, args.launch_log)
    columns = table_columns(args)
    print("| op | size | " + " | ".join(columns) + " |")
    print("|---|---|" + "---|" * len(columns))
    worst = 0.0
    for op in args.ops.split(","):
        for name in args.sizes.split(","):
            # About a second of calls per bare launch, like an adaptive bench-collectives row.
            time_us = commbench_time(args.build, args.ranks, op, SIZES[name])
            iterations = max(20, int(1.0 / max(time_us * 1e-6, 1e-7)))
            bare, oneway, before, ours = launch_times(args, op, name, iterations, log, log_file)
            cells, difference = row_cells(args, bare, oneway, before, ours)
            worst = max(worst, abs(difference))
            print("| " + " | ".join([op, name] + [cells[column] for column in columns]) + " |", flush=True)
    print(f"\nlargest difference: {worst * 100:.1f} % (tolerance {args.tolerance * 100:.0f} %)")
    if log_file:
        log_file.close()
    return 0 if worst <= args.tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
