#!/usr/bin/env python3
"""Writes diff.txt: what changed between the before and after outputs in this folder,
with what changes from run to run anyway (times, bandwidths, noise, the commit, the
start time, the probe time, the allocator's effect on nothing) masked, so only the
format's own changes remain. Run from this folder after the commands in README.md."""
import csv
import difflib
import json
import re

TIMING = {"iterations", "samples", "time_us", "time_min_us", "time_mean_us", "p50_us", "p99_us", "noise",
          "slowest_rank", "algbw_gbps", "busbw_gbps"}
VOLATILE_KEYS = {"commit", "started_at", "command_line", "probe_seconds", "environment", "mpi"}


def masked_text(path):
    lines = []
    for line in open(path):
        line = re.sub(r"commit [0-9a-f]+(-dirty)?", "commit C", line)
        line = re.sub(r"started: \S+", "started: T", line)
        line = re.sub(r"probed in [0-9.]+ s", "probed in S s", line)
        if not line.startswith("#"):
            line = re.sub(r"\d+\.\d+", "N", line)  # times and bandwidths
        line = re.sub(r"Avg bus bandwidth\s*: \S+", "Avg bus bandwidth : N", line)
        lines.append(line)
    return lines


def masked_csv(path):
    rows = list(csv.DictReader(open(path, newline="")))
    header = list(rows[0].keys()) if rows else []
    return [",".join(header) + "\n"] + [",".join("N" if k in TIMING else v for k, v in r.items()) + "\n" for r in rows]


def shape(value, volatile=False):
    """The JSON document with volatile values masked, as indented lines."""
    if isinstance(value, dict):
        return {k: ("V" if k in VOLATILE_KEYS else shape(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [shape(v) for v in value]
    if isinstance(value, float):
        return "N"
    return value


def masked_json(path):
    doc = json.load(open(path))
    for row in doc.get("rows", []):
        for key in TIMING:
            row[key] = "N"
    return (json.dumps(shape(doc), indent=1) + "\n").splitlines(True)


def main():
    out = []
    for name, reader in [("collectives.txt", masked_text), ("collectives.csv", masked_csv),
                         ("collectives.json", masked_json), ("topology.txt", masked_text),
                         ("topology-links.csv", masked_csv), ("topology.json", masked_json)]:
        stem, ext = name.rsplit(".", 1)
        before, after = f"{stem}-before.{ext}", f"{stem}-after.{ext}"
        diff = list(difflib.unified_diff(reader(before), reader(after), before, after, n=1))
        out.append(f"==== {name}: {'no difference' if not diff else str(sum(1 for d in diff if d[0] in '+-') - 2) + ' changed lines'}\n")
        out.extend(diff)
    open("diff.txt", "w").writelines(out)


if __name__ == "__main__":
    main()
