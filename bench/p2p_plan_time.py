#!/usr/bin/env python3
"""How long bench-p2p's matrix takes at scale: a model, printed as the table of docs/p2p.md.

No cluster of 64 to 1024 nodes was at hand, so this is arithmetic over stated inputs, not a
measurement: every round of disjoint pairs runs a latency sub-round and, one way at a time,
a forward and a backward bandwidth sub-round (docs/p2p.md, "Rounds of disjoint pairs"), all
pairs of a round at once, each over its own NIC.

  python3 bench/p2p_plan_time.py [--nic-gbit 400] [--exchange-us 20] [--collective-us 5]
"""
import argparse
import math

BYTES, ITERS, WARMUP = 4 << 20, 10, 2            # bench-p2p's defaults: -b 4M -n 10 -w 2
LATENCY_ITERS = 100                              # --latency-iters
NIC_EFFICIENCY = 0.96                            # the bandwidth model's NIC figure (docs/bandwidth-model.md)
MOST_CELLS = 1 << 24                             # bench-p2p refuses larger plans (exit 2)
CSV_BYTES_PER_CELL = 200                         # a line was 164 B here with short host and device names


def rounds_and_pairs(nodes, per_node, per_rail):
    units = nodes if per_rail else nodes * per_node       # the schedule pairs nodes or ranks
    rounds = units - 1 if units % 2 == 0 else units
    pairs = units * (units - 1) // 2 * (per_node if per_rail else 1)
    return rounds, pairs


def seconds(nodes, per_node, per_rail, nic_gbit, exchange_us, collective_us):
    rounds, pairs = rounds_and_pairs(nodes, per_node, per_rail)
    ranks = nodes * per_node
    message = BYTES / (nic_gbit / 8 * 1e9 * NIC_EFFICIENCY)
    # Each sub-round: a few small collectives over all ranks (agreement, gathering each
    # rank's mean), each about log2(ranks) latencies.
    sync = 4 * collective_us * 1e-6 * math.ceil(math.log2(ranks))
    latency = (WARMUP + LATENCY_ITERS) * exchange_us * 1e-6 + sync
    bandwidth = 2 * ((WARMUP + ITERS) * message + sync)
    return rounds, pairs, rounds * (latency + bandwidth)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nic-gbit", type=float, default=400, help="each GPU's NIC rate (Gb/s)")
    parser.add_argument("--exchange-us", type=float, default=20, help="one small-message exchange (us)")
    parser.add_argument("--collective-us", type=float, default=5, help="one step of a small collective (us)")
    args = parser.parse_args()
    print("| Nodes × GPUs | Mode | Rounds | Cells | Time | CSV |")
    print("|---|---|---|---|---|---|")
    for nodes in (64, 256, 1024):
        for per_node, per_rail, mode in ((1, False, "one rank per node (node matrix)"),
                                         (8, True, "`--per-rail`"), (8, False, "all-pairs over ranks")):
            rounds, pairs, total = seconds(nodes, per_node, per_rail, args.nic_gbit, args.exchange_us,
                                           args.collective_us)
            cells = 2 * pairs
            refused = " (refused: over 16.8 M cells)" if cells > MOST_CELLS else ""
            print("| %d × %d | %s | %d | %.3g M%s | %.1f s | %.2g GB |" % (
                nodes, per_node, mode, rounds, cells / 1e6, refused, total, cells * CSV_BYTES_PER_CELL / 1e9))


if __name__ == "__main__":
    main()
