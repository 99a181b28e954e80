#!/usr/bin/env python3
"""How bench-replay's reading of many ranks' traces scales with the ranks that divide it:
a folder of RANKS traces, each a real rank trace (tests/fixtures/traces/fsdp2, rank 0)
grown to SIZE by repeating its events one step after another and renumbered as one rank of
a RANKS-rank job, read by one process and by `mpirun -np N` for each N of --np. Prints, for
each, the wall seconds and seconds per GiB, the CPU seconds of the one process or of the
slowest rank's share (bench-replay's last line under mpirun), which is what a node of its
own would take where other work shares this one's cores, and whether every run wrote the
one process's JSON.

  python3 bench/replay_ranks_speed.py [--ranks 16] [--bytes 24M] [--np 1,2,4]
                                      [--bin build/bench/bench-replay] [--mpirun mpirun] [--keep DIR]
"""
import argparse
import copy
import gzip
import json
import os
import re
import shutil
import subprocess
import tempfile
import time

from replay_read_speed import SOURCE, parse_size

HERE = os.path.dirname(os.path.abspath(__file__))
# Provenance fields that say when and how a run was started, not what it read.
STARTED = ("started_at", "command_line", "environment")


def grown_events(target):
    """The fixture's complete events again and again, each copy shifted past the last, as
    the text of `target` bytes or a little more; and the trace's other members."""
    with gzip.open(SOURCE, "rt") as f:
        doc = json.load(f)
    events = [e for e in doc.pop("traceEvents") if e.get("ph") == "X"]
    first = min(e["ts"] for e in events)
    span = max(e["ts"] + e.get("dur", 0) for e in events) - first + 1000.0
    lines, written, copies = [], 0, 0
    while written < target:
        for event in events:
            shifted = copy.copy(event)
            shifted["ts"] = event["ts"] + copies * span
            lines.append(json.dumps(shifted))
            written += len(lines[-1]) + 2
        copies += 1
    return doc, ",\n".join(lines)


def write_job(folder, ranks, target):
    doc, body = grown_events(target)
    for rank in range(ranks):
        info = doc["distributedInfo"]
        info.update(rank=rank, world_size=ranks)
        for group in info.get("pg_config", []):
            group.update(pg_size=ranks, ranks=list(range(ranks)))
        with open(os.path.join(folder, f"rank{rank}.json"), "w") as out:
            out.write(json.dumps(doc)[:-1] + ', "traceEvents": [\n' + body + "\n]}\n")


def timed(cmd, json_path):
    """Wall seconds, the CPU seconds of the reading (the one process's, or the slowest
    share's), and the JSON less the provenance of when and how it was started."""
    started = time.monotonic()
    p = subprocess.run(cmd + ["--json", json_path, "--force"], capture_output=True, text=True,
                       env=dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1"))
    seconds = time.monotonic() - started
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr}")
    share = re.search(r"^# divided over .* \(([0-9.e+-]+) s of CPU\)$", p.stdout, re.MULTILINE)
    cpu = float(share.group(1)) if share else sum(map(float, p.stderr.split()[-2:]))
    with open(json_path) as f:
        document = json.load(f)
    for field in STARTED:
        document["provenance"].pop(field)
    return seconds, cpu, document


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=16, help="the traced job's ranks: one file each (default 16)")
    parser.add_argument("--bytes", default="24M", help="size of each rank's trace (default 24M)")
    parser.add_argument("--np", default="1,2,4", help="the reading's rank counts under mpirun (default 1,2,4)")
    parser.add_argument("--bin", default=os.path.join(HERE, "..", "build", "bench", "bench-replay"))
    parser.add_argument("--mpirun", default="mpirun")
    parser.add_argument("--keep", help="write the traces here and keep them")
    args = parser.parse_args()
    folder = args.keep or tempfile.mkdtemp(prefix="commbench-replay-ranks-")
    traces = os.path.join(folder, "traces")
    os.makedirs(traces, exist_ok=True)
    try:
        write_job(traces, args.ranks, parse_size(args.bytes))
        total = sum(os.path.getsize(os.path.join(traces, name)) for name in os.listdir(traces))
        gib = total / (1 << 30)
        print(f"{args.ranks} traces, {total / (1 << 20):.0f} MiB in all ({os.cpu_count()} CPUs here)")
        print(f"load average before: {' '.join(f'{load:.1f}' for load in os.getloadavg())}")
        one = ["/usr/bin/time", "-f", "%U %S", args.bin, traces]
        seconds, cpu, alone = timed(one, os.path.join(folder, "one.json"))
        print(f"one process: {seconds:.2f} s ({seconds / gib:.2f} s per GiB); CPU {cpu:.2f} s "
              f"({cpu / gib:.2f} s per GiB)")
        for ranks in map(int, args.np.split(",")):
            # One rank reads alone, as one process does: /usr/bin/time gives its CPU time.
            cmd = [args.mpirun, "-q", "--oversubscribe", "-np", str(ranks), "/usr/bin/time", "-f", "%U %S",
                   args.bin, traces]
            seconds, cpu, job = timed(cmd, os.path.join(folder, f"np{ranks}.json"))
            same = "the one process's JSON" if job == alone else "JSON DIFFERENT from the one process's"
            print(f"mpirun -np {ranks}: {seconds:.2f} s ({seconds / gib:.2f} s per GiB); slowest share's CPU "
                  f"{cpu:.2f} s ({cpu / gib:.2f} s per GiB); {same}")
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
