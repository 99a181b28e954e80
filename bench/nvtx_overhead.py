#!/usr/bin/env python3
"""What the NVTX ranges cost end to end (issue 21): bench-collectives' printed time of one
case launched without a tool attached and with the project's recording NVTX tool attached
(tests/tools/nvtx_recorder.cpp: every range opened, named and written to a file, more than
Nsight Systems does per range), interleaved launch by launch, medians compared. With
--without OTHER_BUILD (configured with -DCOMMBENCH_WITH_NVTX=OFF) that build is launched
in the same interleaving: the ranges compiled out.

    python3 bench/nvtx_overhead.py --build build --ranks 2 --launches 7 --size 8
"""
import argparse
import csv
import io
import os
import statistics
import subprocess
import sys
import tempfile


def printed_time(bench, ranks, size, extra_env):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", **extra_env)
    exported = [arg for name in extra_env for arg in ("-x", name)]
    out = subprocess.run(["mpirun", "-q", "--oversubscribe", *exported, "-np", str(ranks), bench, "--backend", "mpi",
                          "--op", "allreduce", "-b", str(size), "-e", str(size), "--format", "csv"],
                         capture_output=True, text=True, env=env, timeout=600)
    if out.returncode != 0:
        sys.exit(f"{bench}: exit {out.returncode}: {out.stderr.strip()}")
    return float(next(csv.DictReader(io.StringIO(out.stdout)))["time_us"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--without", help="a build configured with -DCOMMBENCH_WITH_NVTX=OFF")
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--launches", type=int, default=7)
    parser.add_argument("--size", type=int, default=8)
    args = parser.parse_args()
    bench = os.path.join(args.build, "bench", "bench-collectives")
    recorder = os.path.join(args.build, "tests", "libcommbench-nvtx-recorder.so")
    if not os.path.exists(recorder):
        sys.exit(f"{recorder}: not built (needs the NVTX header and COMMBENCH_BUILD_TESTS)")
    with tempfile.TemporaryDirectory(prefix="commbench-nvtx-") as records:
        variants = {"no tool attached": (bench, {}),
                    "recording tool attached": (bench, {"NVTX_INJECTION64_PATH": recorder,
                                                        "COMMBENCH_NVTX_RECORD": records})}
        if args.without:
            variants["built without NVTX"] = (os.path.join(args.without, "bench", "bench-collectives"), {})
        times = {name: [] for name in variants}
        for _ in range(args.launches):
            for name, (program, env) in variants.items():
                times[name].append(printed_time(program, args.ranks, args.size, env))
    reference = statistics.median(times["no tool attached"])
    print(f"| allreduce {args.size} B, {args.ranks} ranks | median of {args.launches} launches (us) | "
          f"against no tool attached | all launches (us) |")
    print("|---|---|---|---|")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"| {name} | {median:.3f} | {100 * (median / reference - 1):+.1f} % | "
              f"{', '.join(f'{v:.3f}' for v in values)} |")


if __name__ == "__main__":
    main()
