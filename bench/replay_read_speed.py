#!/usr/bin/env python3
"""How fast bench-replay reads a large trace, and in how much memory: a real rank trace
(tests/fixtures/traces) grown to SIZE by repeating its events one step after another, read
by bench-replay under /usr/bin/time. Prints one line per file form.

With --format nsys the trace is a real Nsight Systems report (tests/fixtures/nsys, rank 0 of
the llama DDP job, nsys export's SQLite) grown the same way: its NVTX ranges copied again
and again, each copy shifted past the last.

  python3 bench/replay_read_speed.py [--format json|nsys] [--bytes 1G] [--bin build/bench/bench-replay] [--keep DIR]
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

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "..", "tests", "fixtures", "traces", "fsdp2", "rank0.json.gz")
NSYS_SOURCE = os.path.join(HERE, "..", "tests", "fixtures", "nsys", "nsys-llama-ddp", "rank0.sqlite.gz")


def parse_size(text):
    match = re.fullmatch(r"([0-9.]+)([KMG]?)", text)
    if not match:
        raise SystemExit(f"--bytes: '{text}' is not a size such as 1G or 200M")
    return int(float(match.group(1)) * {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[match.group(2)])


def grow(path, target):
    """Writes the fixture's events again and again, each copy shifted past the last, until
    the file holds `target` bytes; the other members stay as the profiler wrote them."""
    with gzip.open(SOURCE, "rt") as f:
        doc = json.load(f)
    events = [e for e in doc.pop("traceEvents") if e.get("ph") == "X"]
    first = min(e["ts"] for e in events)
    span = max(e["ts"] + e.get("dur", 0) for e in events) - first + 1000.0
    head = json.dumps(doc)[:-1] + ', "traceEvents": [\n'
    written, copies = 0, 0
    with open(path, "w") as out:
        out.write(head)
        written += len(head)
        while written < target:
            for event in events:
                shifted = copy.copy(event)
                shifted["ts"] = event["ts"] + copies * span
                text = ("," if written > len(head) else "") + json.dumps(shifted) + "\n"
                out.write(text)
                written += len(text)
            copies += 1
        out.write("]}\n")
    return copies


def grow_report(path, target):
    """Copies the report's NVTX ranges, doubling them, each copy shifted past the last,
    until the database file holds `target` bytes; returns how many copies of the step."""
    import sqlite3
    with gzip.open(NSYS_SOURCE, "rb") as src, open(path, "wb") as dst:
        shutil.copyfileobj(src, dst)
    db = sqlite3.connect(path)
    first, last = db.execute("SELECT min(start), max(end) FROM NVTX_EVENTS").fetchone()
    span = last - first + 1_000_000
    columns = [row[1] for row in db.execute("PRAGMA table_info(NVTX_EVENTS)")]
    shifted = ", ".join({"start": "start + ?", "end": "end + ?"}.get(c, c) for c in columns)
    copies = 1
    while os.path.getsize(path) < target:
        db.execute(f"INSERT INTO NVTX_EVENTS SELECT {shifted} FROM NVTX_EVENTS", (copies * span, copies * span))
        db.commit()
        copies *= 2
    db.close()
    return copies


def measure(binary, path):
    p = subprocess.run(["/usr/bin/time", "-f", "%e %M", binary, path], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"bench-replay failed ({p.returncode}): {p.stderr}")
    seconds, kib = p.stderr.strip().splitlines()[-1].split()
    calls = re.search(r"([0-9]+) collective calls per rank", p.stdout).group(1)
    return float(seconds), int(kib) / 1024, int(calls)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bytes", default="1G", help="size of the trace's text (default 1G)")
    parser.add_argument("--bin", default=os.path.join(HERE, "..", "build", "bench", "bench-replay"))
    parser.add_argument("--keep", help="write the traces here and keep them")
    parser.add_argument("--format", choices=("json", "nsys"), default="json",
                        help="a torch.profiler trace (default) or an Nsight Systems report")
    args = parser.parse_args()
    target = parse_size(args.bytes)
    folder = args.keep or tempfile.mkdtemp(prefix="commbench-replay-speed-")
    os.makedirs(folder, exist_ok=True)
    try:
        plain = os.path.join(folder, "rank0.json" if args.format == "json" else "rank0.sqlite")
        copies = (grow if args.format == "json" else grow_report)(plain, target)
        packed = plain + ".gz"
        with open(plain, "rb") as src, gzip.open(packed, "wb", compresslevel=6) as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        for path in (plain, packed):
            seconds, mib, calls = measure(args.bin, path)
            print(f"{os.path.basename(path)}: {os.path.getsize(path) / (1 << 20):.0f} MiB on disk, "
                  f"{os.path.getsize(plain) / (1 << 20):.0f} MiB uncompressed, {copies} copies of the step, "
                  f"{calls} calls: read in {seconds:.2f} s, peak memory {mib:.0f} MiB")
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
