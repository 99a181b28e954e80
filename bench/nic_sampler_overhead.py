#!/usr/bin/env python3
"""What the NIC counter sampler costs the measured times, end to end: bench-collectives
launched across the nodes of a Slurm job with `--nic-counters on` and `--nic-counters off`,
interleaved launch by launch (the sides take turns going first), each side's times held
against the reference side's, launch round by launch round. The sampler reads every
port's counters every 10 ms on one rank per node, on a thread of its own.

    scripts/slurm-cluster.sh up
    python3 bench/nic_sampler_overhead.py --rounds 12 --out results/slurm-cluster/nic-sampler/run

A side is LABEL=BINARY:MODE (MODE is what --nic-counters gets); the last side is the
reference. The default is `on` and `off` of BUILD's bench-collectives. Two sides that
both run `off` (--control) show what the method reads where there is nothing to find;
another build's binary as a side compares two samplers in the same rounds. Without
--cluster the launcher is plain `srun` (inside a Slurm allocation of several nodes).
Writes OUT/launches.csv (every launch's time per size) and OUT/summary.txt (printed too);
--summarize writes the summary again from OUT/launches.csv.
"""
import argparse
import csv
import io
import os
import random
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def launch(args, binary, mode):
    """One bench-collectives run; its time in microseconds per size in bytes."""
    launcher = [args.cluster, "run", "srun"] if args.cluster else ["srun"]
    command = [*launcher, "--mpi=pmix", "-N", str(args.nodes), binary, "--backend", "mpi", "--op", args.op,
               "-b", args.min_bytes, "-e", args.max_bytes, "-f", "8", "-n", str(args.iterations), "-w", "2",
               "--nic-counters", mode, "--format", "csv"]
    p = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        sys.exit(f"nic_sampler_overhead: {' '.join(command)}: exit {p.returncode}: {p.stderr.strip()[-400:]}")
    table = "\n".join(line for line in p.stdout.splitlines() if line and not line.startswith("#"))
    rows = [r for r in csv.DictReader(io.StringIO(table)) if r.get("time_us")]
    if not rows:
        sys.exit(f"nic_sampler_overhead: no result rows from {' '.join(command)}")
    return {int(r["bytes"]): float(r["time_us"]) for r in rows}


def parse_side(text):
    label, _, rest = text.partition("=")
    binary, _, mode = rest.rpartition(":")
    if not label or not binary or mode not in ("on", "off"):
        sys.exit(f"nic_sampler_overhead: --side: '{text}' is not LABEL=BINARY:on|off")
    return label, binary, mode


def run_rounds(args, sides):
    """Rows (round, side, binary, mode, bytes, time_us); the order of sides turns each round."""
    rows = []
    for k in range(args.rounds):
        order = sides[k % len(sides):] + sides[:k % len(sides)]
        for label, binary, mode in order:
            for size, time_us in sorted(launch(args, binary, mode).items()):
                rows.append({"round": k, "side": label, "binary": binary, "nic_counters": mode, "bytes": size,
                             "time_us": time_us})
    return rows


def summary(rows, title):
    labels = list(dict.fromkeys(r["side"] for r in rows))
    reference = labels[-1]
    by = {(int(r["round"]), r["side"], int(r["bytes"])): float(r["time_us"]) for r in rows}
    rounds = sorted({int(r["round"]) for r in rows})
    sizes = sorted({int(r["bytes"]) for r in rows})
    modes = {r["side"]: r["nic_counters"] for r in rows}
    lines = [title, f"# sides: {', '.join(f'{s} (--nic-counters {modes[s]})' for s in labels)}; "
             f"each held against {reference} of the same round"]
    for side in labels[:-1]:
        lines.append(f"{side} / {reference}")
        lines.append(f"{'bytes':>10} {side + ' us':>12} {reference + ' us':>12} {'paired':>8} {'slower':>7} "
                     f"{'spread ' + reference:>14}")
        for size in sizes:
            mine = [by[(k, side, size)] for k in rounds]
            theirs = [by[(k, reference, size)] for k in rounds]
            ratios = [a / b for a, b in zip(mine, theirs)]
            middle = statistics.median(theirs)
            # The reference's own round-to-round scatter, for scale.
            spread = statistics.median(abs(v - middle) for v in theirs) / middle
            lines.append(f"{size:>10} {statistics.median(mine):>12.1f} {middle:>12.1f} "
                         f"{statistics.median(ratios):>8.3f} {sum(r > 1 for r in ratios):>3}/{len(ratios):<3} "
                         f"{100 * spread:>13.1f}%")
        low, middle, high = pooled_ratio([[by[(k, side, s)] / by[(k, reference, s)] for s in sizes] for k in rounds])
        lines.append(f"all sizes: median ratio {middle:.3f}, 95 % interval {low:.3f} to {high:.3f} "
                     "(bootstrap over the rounds)")
    return "\n".join(lines) + "\n"


def pooled_ratio(per_round, resamples=2000):
    """The median of every size's ratio over the rounds, with an interval from resampling
    whole rounds (a launch's sizes move together, so a round is the unit)."""
    generator = random.Random(0)

    def median_of(chosen):
        return statistics.median(r for ratios in chosen for r in ratios)

    drawn = sorted(median_of(generator.choices(per_round, k=len(per_round))) for _ in range(resamples))
    return drawn[int(0.025 * resamples)], median_of(per_round), drawn[int(0.975 * resamples) - 1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--cluster", default=os.path.join(HERE, "..", "scripts", "slurm-cluster.sh"),
                        help="the test cluster's script; '' for plain srun")
    parser.add_argument("--side", action="append", default=[], help="LABEL=BINARY:on|off (repeat; last: reference)")
    parser.add_argument("--control", action="store_true", help="the sides 'off-a' and 'off', both without sampler")
    parser.add_argument("--nodes", type=int, default=4)
    parser.add_argument("--op", default="allreduce")
    parser.add_argument("--min-bytes", default="8")
    parser.add_argument("--max-bytes", default="16M")
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=12, help="one launch of every side per round")
    parser.add_argument("--out", required=True)
    parser.add_argument("--summarize", action="store_true", help="launch nothing: summarize OUT/launches.csv again")
    args = parser.parse_args()
    bench = os.path.join(args.build, "bench", "bench-collectives")
    sides = [parse_side(text) for text in args.side] or (
        [("off-a", bench, "off"), ("off", bench, "off")] if args.control else [("on", bench, "on"), ("off", bench, "off")])
    os.makedirs(args.out, exist_ok=True)
    launches_csv = os.path.join(args.out, "launches.csv")
    if args.summarize:
        with open(launches_csv, newline="") as f:
            rows = list(csv.DictReader(f))
    else:
        rows = run_rounds(args, sides)
        with open(launches_csv, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    text = summary(rows, f"# {len({r['round'] for r in rows})} rounds; {args.nodes} nodes; {args.op}, "
                   f"{args.iterations} iterations a size")
    with open(os.path.join(args.out, "summary.txt"), "w") as f:
        f.write(text)
    print(text, end="")


if __name__ == "__main__":
    main()
