#!/usr/bin/env python3
"""End-to-end comparison of bench-collectives' printed time with a bare loop of the same
MPI call in its own process (bare-mpi-loop), as a user would check the harness: several
launches of each, interleaved (bare, commbench, bare, ...) so drift in the machine hits
both alike, medians compared. Both programs' buffers start on a page boundary. Prints a
markdown table (the medians, the launch-by-launch difference and the bare loop's range)
and exits 1 when a case's medians differ by more than --tolerance.

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
import os
import re
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


# Exit codes as the commbench programs use them: 2 bad input, 3 a launch failed, 4 timeout.
def fail(code, message):
    print(f"compare_with_bare_loop.py: error: {message}", file=sys.stderr)
    sys.exit(code)


def mpirun(ranks, *command):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", **ALLOCATOR_ENV[allocator])
    exported = [arg for name in ALLOCATOR_ENV[allocator] for arg in ("-x", name)]
    what = " ".join(map(str, command))
    try:
        out = subprocess.run(["mpirun", "-q", "--oversubscribe", *exported, "-np", str(ranks), *map(str, command)],
                             capture_output=True, text=True, env=env, timeout=LAUNCH_TIMEOUT_SECONDS)
    except FileNotFoundError:
        fail(3, "mpirun not found on PATH")
    except subprocess.TimeoutExpired:
        fail(4, f"{what}: no result within {LAUNCH_TIMEOUT_SECONDS} s")
    if out.returncode != 0:
        last_line = (out.stderr.strip().splitlines() or ["no message"])[-1]
        fail(3, f"{what}: exit {out.returncode}: {last_line}")
    return out.stdout


def bare_time(build, ranks, op, size, iterations, buffers, oneway=0):
    alignment = ["page"] if buffers == "page" else []
    extras = [f"oneway={oneway}"] if oneway else []
    text = mpirun(ranks, os.path.join(build, "bench", "bare-mpi-loop"), op, size, iterations, *alignment, *extras)
    return float(re.search(r": ([0-9.]+) us", text).group(1))


def commbench_time(build, ranks, op, size):
    text = mpirun(ranks, os.path.join(build, "bench", "bench-collectives"), "--backend", "mpi", "--op", op,
                  "-b", size, "-e", size, "--format", "csv")
    return float(next(csv.DictReader(io.StringIO(text)))["time_us"])


def main():
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
    # malloc puts it (16-byte aligned). On an AMD EPYC VM that alone made a bare 16 MiB
    # allgather about 40 % slower (docs/performance.md), so by default the bare loop's
    # buffers are page-aligned too: the comparison is of the harness, not of alignment.
    parser.add_argument("--bare-buffers", choices=["page", "vector"], default="page",
                        help="where the bare loop's buffers start: on a page boundary, as bench-collectives' "
                        "(default), or where std::vector puts them")
    parser.add_argument("--oneway-too", action="store_true",
                        help="also time the bare loop after one one-way message (bare-mpi-loop oneway=1)")
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
    for build in [args.build] + ([args.before] if args.before else []):
        if not os.path.isfile(os.path.join(build, "bench", "bench-collectives")):
            parser.error(f"--build/--before {build}: no bench/bench-collectives there")
    global allocator
    allocator = args.malloc
    before_columns = " before median (us) | before vs bare |" if args.before else ""
    oneway_columns = " bare oneway=1 median (us) | vs bare oneway=1 |" if args.oneway_too else ""
    # The last two columns tell a bias from this machine's launch-to-launch spread: the
    # median of the launch-by-launch ratios (each bench-collectives launch against the
    # bare launch just before it) and how far the bare loop's own launches range.
    print(f"| op | size | bare loop median (us) |{before_columns} bench-collectives median (us) | difference "
          f"| paired difference | bare launches min-max (us) |{oneway_columns}")
    print("|---|---|---|---|---|---|---|" + ("---|---|" if args.before else "") + ("---|---|" if args.oneway_too else ""))
    worst = 0.0
    for op in args.ops.split(","):
        for name in args.sizes.split(","):
            size = SIZES[name]
            # About a second of calls per bare launch, like an adaptive bench-collectives row.
            iterations = max(20, int(1.0 / max(commbench_time(args.build, args.ranks, op, size) * 1e-6, 1e-7)))
            bare, oneway, before, ours = [], [], [], []
            for _ in range(args.launches):
                bare.append(bare_time(args.build, args.ranks, op, size, iterations, args.bare_buffers))
                if args.oneway_too:
                    oneway.append(bare_time(args.build, args.ranks, op, size, iterations, args.bare_buffers, 1))
                if args.before:
                    before.append(commbench_time(args.before, args.ranks, op, size))
                ours.append(commbench_time(args.build, args.ranks, op, size))
            b, c = statistics.median(bare), statistics.median(ours)
            difference = c / b - 1
            worst = max(worst, abs(difference))
            before_cells = ""
            if args.before:
                p = statistics.median(before)
                before_cells = f" {p:.3f} | {(p / b - 1) * 100:+.1f} % |"
            oneway_cells = ""
            if args.oneway_too:
                o = statistics.median(oneway)
                oneway_cells = f" {o:.3f} | {(c / o - 1) * 100:+.1f} % |"
            paired = statistics.median(ours[i] / bare[i] for i in range(args.launches)) - 1
            print(f"| {op} | {name} | {b:.3f} |{before_cells} {c:.3f} | {difference * 100:+.1f} % "
                  f"| {paired * 100:+.1f} % | {min(bare):.3f}-{max(bare):.3f} |{oneway_cells}", flush=True)
    print(f"\nlargest difference: {worst * 100:.1f} % (tolerance {args.tolerance * 100:.0f} %)")
    return 0 if worst <= args.tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
