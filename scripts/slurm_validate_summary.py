#!/usr/bin/env python3
"""The table of scripts/slurm-validate-acceptance.sh: for every run kept in OUT, what it
showed against what its case must show, and "pass" or "FAIL" with the reason.

    scripts/slurm_validate_summary.py OUT"""
import datetime
import glob
import json
import os
import re
import sys

NODE, LINK = "cb-node3", ("cb-node1", "cb-node4")
MARGIN_S, DIP_TOLERANCE_S = 60, 3


def console(path):
    with open(path) as f:
        text = f.read()
    status = int(re.search(r"^exit (\d+)$", text, re.M).group(1))
    wall = float(re.search(r"^wall_s ([\d.]+)$", text, re.M).group(1))
    return text, status, wall


def utc(text):
    return datetime.datetime.fromisoformat(text.rstrip("Z")[:26])


def plan_run(kind, text, status, wall):
    bound = re.search(r"^# plan: .*at most ([\d.]+) s \(--time-limit\)", text, re.M)
    elapsed = re.search(r"^plan: .* ([\d.]+) s$", text, re.M)
    fails = [line for line in text.splitlines() if line.startswith("FAIL ")]
    shown = "exit %d, %.1f s wall (plan's own clock %s s, bound %s s); %s" % (
        status, wall, elapsed.group(1) if elapsed else "?", bound.group(1) if bound else "?",
        " | ".join(fails) or "no FAIL line")
    problems = []
    if status != 1:
        problems.append("exit %d, not 1" % status)
    if not bound or wall > float(bound.group(1)) + MARGIN_S:
        problems.append("not within the printed bound + %d s" % MARGIN_S)
    if len(fails) != 1:
        problems.append("%d FAIL lines, not 1" % len(fails))
    elif kind == "node" and not (fails[0].startswith("FAIL node %s:" % NODE) and "NIC: %s eth0" % NODE in fails[0]):
        problems.append("the FAIL line does not name %s and its NIC" % NODE)
    elif kind == "link" and not fails[0].startswith("FAIL link %s - %s:" % LINK):
        problems.append("the FAIL line does not name the link %s - %s" % LINK)
    return shown, problems


def soak_run(kind, path, text, status, wall):
    with open(path[:-4] + ".json") as f:
        doc = json.load(f)
    started = utc(doc["soak"]["started_utc"])
    events = doc["events"]
    shown = "exit %d, %.1f s wall; events: %s" % (status, wall, "; ".join(
        "%s %s %.1f-%.1f s (%s)" % (e["kind"], e["node_a"] + ("-" + e["node_b"] if e["node_b"] else ""),
                                     e["start_s"], e["end_s"], e["result"]) for e in events) or "none")
    problems = []
    if kind == "soak-healthy":
        if status != 0:
            problems.append("exit %d, not 0" % status)
        if events:
            problems.append("%d events, not 0" % len(events))
        return shown, problems
    with open(path[:-4] + ".shaping") as f:
        moments = dict(line.split(": ", 1) for line in f.read().splitlines())
    shaped = (utc(moments["shaped"]) - started).total_seconds()
    restored = (utc(moments["restored"]) - started).total_seconds()
    shown += "; shaped %.1f-%.1f s" % (shaped, restored)
    if status != 1:
        problems.append("exit %d, not 1" % status)
    named = [e for e in events if e["kind"] == "node" and e["node_a"] == NODE]
    others = [e for e in events if e["result"] == "fail" and e not in named]
    if len(named) != 1:
        problems.append("%d events of node %s, not 1" % (len(named), NODE))
    elif abs(named[0]["start_s"] - shaped) > DIP_TOLERANCE_S or abs(named[0]["end_s"] - restored) > DIP_TOLERANCE_S:
        problems.append("the event is not within %d s of the shaping" % DIP_TOLERANCE_S)
    if others:
        problems.append("%d other failing events" % len(others))
    return shown, problems


def main(out):
    lines = []
    for path in sorted(glob.glob(os.path.join(out, "*.txt"))):
        name = os.path.basename(path)[:-4]
        kind = name.rsplit("-", 1)[0]
        if kind not in ("node", "link", "soak", "soak-healthy"):
            continue
        text, status, wall = console(path)
        shown, problems = (plan_run(kind, text, status, wall) if kind in ("node", "link")
                           else soak_run(kind, path, text, status, wall))
        lines.append("%-15s %s\n%-15s %s" % (name, "pass" if not problems else "FAIL: " + "; ".join(problems), "", shown))
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1])
