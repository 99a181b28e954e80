#!/usr/bin/env python3
"""bench-replay beside HTA (HolisticTraceAnalysis) on the same traces: a real NCCL rank trace
(tests/fixtures/traces/public, A100, kernels, launches and flows) grown to each SIZE by repeating
its steps, each copy shifted past the last in time, correlation ids, flow ids and step numbers, so
both readers link every kernel to its own launch. Each file is read by bench-replay (--json) and
by HTA's TraceAnalysis (load, then get_comm_comp_overlap) in a child process under
/usr/bin/time, pinned to one core; prints times, peak memory, the ratios, and each reader's
total NCCL time.

HTA lives in its own virtual environment, outside the source tree:
  python3 -m venv /work/hta-venv && /work/hta-venv/bin/pip install HolisticTraceAnalysis==0.5.0
Without --hta-python (or when it cannot import hta) HTA is skipped, and the output says so.

  python3 bench/replay_vs_hta.py [--sizes 200M,1G] [--hta-python /work/hta-venv/bin/python] [--keep DIR]
"""
import argparse
import copy
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "..", "tests", "fixtures", "traces", "public", "hta-sendrecv-16ranks", "rank0.json.gz")

# Run by HTA's python: load the folder, compute the overlap, then (outside the timed part)
# sum the NCCL kernels' durations as HTA's frame holds them.
HTA_CHILD = r"""
import json, sys, time
start = time.perf_counter()
from hta.trace_analysis import TraceAnalysis
# The whole trace, as bench-replay reads it: HTA drops the last step by default.
analysis = TraceAnalysis(trace_dir=sys.argv[1], include_last_profiler_step=True)
loaded = time.perf_counter()
overlap = analysis.get_comm_comp_overlap(visualize=False)
done = time.perf_counter()
trace = analysis.t
frame = trace.get_trace(0)
names = trace.symbol_table.get_sym_table()
nccl_ids = [i for i, name in enumerate(names) if "nccl" in name.lower() and "kernel" in name.lower()]
kernels = frame[frame["name"].isin(nccl_ids) & (frame["stream"] > 0)]
print(json.dumps({"load_s": loaded - start, "overlap_s": done - loaded,
                  "overlap_pct": float(overlap["comp_comm_overlap_pctg"].iloc[0]),
                  "nccl_kernels": int(len(kernels)), "nccl_ms": float(kernels["dur"].sum()) / 1000.0}))
"""


def parse_size(text):
    match = re.fullmatch(r"([0-9.]+)([KMG]?)", text)
    if not match:
        raise SystemExit(f"--sizes: '{text}' is not a size such as 1G or 200M")
    return int(float(match.group(1)) * {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[match.group(2)])


class Grower:
    """One copy of the trace's timed events, shifted by `k` copies: times by the trace's span,
    ids (correlation, External id, flow id, Ev Idx) past the largest in the trace, and
    ProfilerStep numbers past the last step, so copies never share a link."""

    def __init__(self, doc):
        events = doc["traceEvents"]
        self.metadata = [e for e in events if e.get("ph") == "M" or e.get("cat") == "Trace"]
        self.window = [e for e in events if e.get("ph") == "i"]
        self.timed = [e for e in events if e not in self.metadata and e not in self.window]
        first = min(e["ts"] for e in self.timed)
        self.span = max(e["ts"] + e.get("dur", 0) for e in self.timed) - first + 1000
        ids = [e["id"] for e in self.timed if "id" in e]
        ids += [v for e in self.timed for k, v in e.get("args", {}).items() if k in ("correlation", "External id")]
        self.id_step = max(ids) + 1
        self.index_step = max([e["args"]["Ev Idx"] for e in self.timed if "Ev Idx" in e.get("args", {})] + [0]) + 1
        steps = [int(e["name"][len("ProfilerStep#"):]) for e in self.timed if e["name"].startswith("ProfilerStep#")]
        self.step_first, self.step_count = min(steps), max(steps) - min(steps) + 1

    def shifted(self, event, k):
        if k == 0:
            return event
        out = copy.copy(event)
        out["ts"] = event["ts"] + k * self.span
        if "id" in out:
            out["id"] = event["id"] + k * self.id_step
        if out["name"].startswith("ProfilerStep#"):
            out["name"] = f"ProfilerStep#{int(out['name'][13:]) + k * self.step_count}"
        args = event.get("args")
        if args:
            out["args"] = dict(args)
            for key in ("correlation", "External id"):
                if key in args:
                    out["args"][key] = args[key] + k * self.id_step
            if "Ev Idx" in args:
                out["args"]["Ev Idx"] = args["Ev Idx"] + k * self.index_step
        return out


def grow(path, target):
    """Writes the source's steps again and again until the file holds about `target` bytes;
    returns how many copies. The trace's window (its Trace span, Record Window End) covers them all."""
    with gzip.open(SOURCE, "rt") as f:
        doc = json.load(f)
    grower = Grower(doc)
    one_copy = sum(len(json.dumps(e)) + 2 for e in grower.timed)
    copies = max(1, -(-target // one_copy))
    head = {k: v for k, v in doc.items() if k != "traceEvents"}
    fixed = []
    for event in grower.metadata:
        event = copy.deepcopy(event)
        if event.get("cat") == "Trace":
            event["dur"] = event["dur"] + (copies - 1) * grower.span
        fixed.append(event)
    for event in grower.window:
        last = event["name"].startswith("Record Window End")
        fixed.append(grower.shifted(event, copies - 1) if last else event)
    with open(path, "w") as out:
        out.write(json.dumps(head)[:-1] + ', "traceEvents": [\n')
        out.write(",\n".join(json.dumps(e) for e in fixed))
        for k in range(copies):
            out.write(",\n" + ",\n".join(json.dumps(grower.shifted(e, k)) for e in grower.timed))
        out.write("\n]}\n")
    return copies


def timed_run(command):
    """Runs `command` on one core under /usr/bin/time; returns (stdout, seconds, peak MiB)."""
    p = subprocess.run(["/usr/bin/time", "-f", "%e %M", "taskset", "-c", "0"] + command,
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"{command[0]} failed ({p.returncode}): {p.stderr[-2000:]}")
    seconds, kib = p.stderr.strip().splitlines()[-1].split()
    return p.stdout, float(seconds), int(kib) / 1024


def run_replay(binary, path, folder):
    report = os.path.join(folder, "replay.json")
    _, seconds, mib = timed_run([binary, path, "--json", report])
    with open(report) as f:
        doc = json.load(f)
    os.remove(report)
    return seconds, mib, doc


def replay_comm_ms(doc):
    """Rank 0's communication (the union of its NCCL kernels) and its calls' own time, in ms."""
    rank = doc["ranks"][0]
    return rank["communication_seconds"] * 1000.0, rank["calls_seconds"] * 1000.0


def run_hta(python, folder):
    out, seconds, mib = timed_run([python, "-c", HTA_CHILD, folder])
    return seconds, mib, json.loads(out.strip().splitlines()[-1])


def hta_usable(python):
    if not python:
        return False, "no --hta-python given"
    if not os.path.exists(python):
        return False, f"{python} does not exist"
    p = subprocess.run([python, "-c", "import hta"], capture_output=True, text=True)
    return p.returncode == 0, (p.stderr.strip().splitlines() or ["import hta failed"])[-1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="200M,1G", help="sizes of the traces' text, comma-separated")
    parser.add_argument("--bin", default=os.path.join(HERE, "..", "build", "bench", "bench-replay"))
    parser.add_argument("--hta-python", help="python of a virtual environment with HolisticTraceAnalysis")
    parser.add_argument("--keep", help="write the traces here and keep them")
    args = parser.parse_args()
    with_hta, why = hta_usable(args.hta_python)
    if not with_hta:
        print(f"HTA skipped: {why}")
    root = args.keep or tempfile.mkdtemp(prefix="commbench-replay-hta-")
    try:
        for size in args.sizes.split(","):
            folder = os.path.join(root, size)
            os.makedirs(folder, exist_ok=True)
            path = os.path.join(folder, "rank0.json")
            copies = grow(path, parse_size(size))
            mib_on_disk = os.path.getsize(path) / (1 << 20)
            seconds, mib, doc = run_replay(args.bin, path, root)
            comm_ms, calls_ms = replay_comm_ms(doc)
            print(f"{size}: {mib_on_disk:.0f} MiB, {copies} copies of {os.path.basename(os.path.dirname(SOURCE))}'s "
                  f"steps; bench-replay {seconds:.2f} s ({mib_on_disk / 1024 / seconds:.2f} GiB/s), "
                  f"peak {mib:.0f} MiB, comm {comm_ms:.1f} ms of which calls {calls_ms:.1f} ms")
            if with_hta:
                hta_s, hta_mib, hta = run_hta(args.hta_python, folder)
                print(f"{size}: HTA {hta_s:.2f} s (load {hta['load_s']:.2f} s, overlap {hta['overlap_s']:.2f} s), "
                      f"peak {hta_mib:.0f} MiB, {hta['nccl_kernels']} NCCL kernels {hta['nccl_ms']:.1f} ms, "
                      f"overlap {hta['overlap_pct']:.1f} %")
                print(f"{size}: bench-replay {hta_s / seconds:.1f}x faster than HTA in {hta_mib / mib:.0f}x less "
                      f"memory; NCCL time: HTA {hta['nccl_ms']:.1f} ms, bench-replay's calls "
                      f"{calls_ms:.1f} ms ({(calls_ms - hta['nccl_ms']) / hta['nccl_ms'] * 100:+.2f} %), "
                      f"its comm {comm_ms:.1f} ms")
            sys.stdout.flush()
            if not args.keep:
                os.remove(path)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
