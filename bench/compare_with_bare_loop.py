#!/usr/bin/env python3
"""End-to-end comparison of bench-collectives' printed time with a bare loop of the same
MPI call in its own process (bare-mpi-loop), as a user would check the harness: several
launches of each, interleaved (bare, commbench, bare, ...) so drift in the machine hits
both alike, medians compared. Prints a markdown table and exits 1 when a case is off by
more than --tolerance.

    python3 bench/compare_with_bare_loop.py --build build --ranks 2 --launches 5
"""
import argparse
import csv
import io
import os
import re
import statistics
import subprocess
import sys

SIZES = {"8 B": 8, "1 KiB": 1024, "1 MiB": 1 << 20, "16 MiB": 16 << 20}
OPS = ["allreduce", "allgather", "reducescatter", "broadcast"]


def mpirun(ranks, *command):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    out = subprocess.run(["mpirun", "-q", "--oversubscribe", "-np", str(ranks), *map(str, command)],
                         capture_output=True, text=True, env=env, timeout=600)
    if out.returncode != 0:
        sys.exit(f"{' '.join(map(str, command))}: exit {out.returncode}: {out.stderr.strip()}")
    return out.stdout


def bare_time(build, ranks, op, size, iterations):
    text = mpirun(ranks, os.path.join(build, "bench", "bare-mpi-loop"), op, size, iterations)
    return float(re.search(r": ([0-9.]+) us", text).group(1))


def commbench_time(build, ranks, op, size):
    text = mpirun(ranks, os.path.join(build, "bench", "bench-collectives"), "--backend", "mpi", "--op", op,
                  "-b", size, "-e", size, "--format", "csv")
    return float(next(csv.DictReader(io.StringIO(text)))["time_us"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--launches", type=int, default=5)
    parser.add_argument("--tolerance", type=float, default=0.10)
    parser.add_argument("--ops", default=",".join(OPS))
    parser.add_argument("--sizes", default=",".join(SIZES), help="names from: " + ", ".join(SIZES))
    args = parser.parse_args()
    print(f"| op | size | bare loop median (us) | bench-collectives median (us) | difference |")
    print("|---|---|---|---|---|")
    worst = 0.0
    for op in args.ops.split(","):
        for name in args.sizes.split(","):
            size = SIZES[name]
            # About a second of calls per bare launch, like an adaptive bench-collectives row.
            iterations = max(20, int(1.0 / max(commbench_time(args.build, args.ranks, op, size) * 1e-6, 1e-7)))
            bare, ours = [], []
            for _ in range(args.launches):
                bare.append(bare_time(args.build, args.ranks, op, size, iterations))
                ours.append(commbench_time(args.build, args.ranks, op, size))
            b, c = statistics.median(bare), statistics.median(ours)
            difference = c / b - 1
            worst = max(worst, abs(difference))
            print(f"| {op} | {name} | {b:.3f} | {c:.3f} | {difference * 100:+.1f} % |", flush=True)
    print(f"\nlargest difference: {worst * 100:.1f} % (tolerance {args.tolerance * 100:.0f} %)")
    return 0 if worst <= args.tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
