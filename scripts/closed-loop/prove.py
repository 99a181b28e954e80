#!/usr/bin/env python3
"""The closed-loop proof (docs/closed-loop.md): does `bench-patterns --tune`'s recommendation
make the real framework's step faster, as much as a search by real trials, for less cluster
time?

On the Slurm test cluster (scripts/slurm-cluster.sh) with every node's link shaped to
--rate, it runs the real job (training_job.py, 4 nodes, one rank each):
  1. once with the start settings, traced (torch.profiler);
  2. `bench-patterns --tune --tune-against` that trace, on the same nodes: the recommendation;
  3. the users' alternative: --search-trials real trials over the same knobs (a grid while
     it fits, else drawn at random), the fastest of them the search's best;
  4. start, recommendation and the search's best, --runs rounds each, interleaved;
and writes into --out: runs.jsonl (every job run), commands.txt, tune.json, tune.csv,
recommended.json, summary.json and summary.txt (medians, ranges, gains, cluster time and the
verdicts of closed_loop_summary.py).

Exit codes: 0 done (whatever the verdicts say); 2 bad arguments; 3 a run failed; 4 a command
on the cluster did not end within its bound (30 minutes a run).
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "fixtures", "traces"))
import closed_loop_summary as summary  # noqa: E402
import tiny_llama  # noqa: E402
from settings_file import FSDP2_KNOBS, SettingsError, read_settings_file  # noqa: E402

CLUSTER = os.path.join(ROOT, "scripts", "slurm-cluster.sh")
PATTERN_OF = {"ddp": "ddp", "fsdp2": "fsdp", "zero3": "zero3"}
JOB_TIMEOUT_S = 1800


def fail(code, message):
    print(f"prove.py: {message}", file=sys.stderr, flush=True)
    sys.exit(code)


def bounded(words, timeout, what, cwd=None):
    """Runs `words`; a command that outlasts `timeout` ends the proof with exit 4, naming it."""
    try:
        return subprocess.run(words, capture_output=True, text=True, timeout=timeout, cwd=cwd)
    except subprocess.TimeoutExpired:
        fail(4, f"{what}: no end after {timeout} s")


def parse_arguments(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--framework", required=True, choices=sorted(PATTERN_OF))
    ap.add_argument("--start", help="the start settings, as training_job.py --settings reads them (default: none)")
    ap.add_argument("--rate", required=True, help="every node's link rate, tc's spelling (500mbit)")
    ap.add_argument("--out", required=True, help="the folder the results go to (created; must not hold them yet)")
    ap.add_argument("--shape", default="proof", choices=sorted(tiny_llama.SHAPES))
    ap.add_argument("--runs", type=int, default=5, help="interleaved runs of each side (default 5)")
    ap.add_argument("--search-trials", type=int, default=40, help="real trials of the search (default 40)")
    ap.add_argument("--steps", type=int, default=3, help="timed steps of each run (default 3)")
    ap.add_argument("--tune-budget", type=float, default=600, help="bench-patterns --tune-budget (default 600)")
    ap.add_argument("--python", default=sys.executable, help="the Python with torch (and deepspeed for zero3)")
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bench"), help="where bench-patterns is")
    ap.add_argument("--resume", action="store_true",
                    help="go on with a proof --out holds: the runs it recorded are not run again")
    args = ap.parse_args(argv)
    if args.runs < 1 or args.search_trials < 1 or args.steps < 1:
        fail(2, "--runs, --search-trials and --steps must be at least 1")
    if args.resume and not os.path.exists(os.path.join(args.out, "runs.jsonl")):
        fail(2, f"--resume: {args.out} holds no runs.jsonl to go on from")
    if os.path.exists(os.path.join(args.out, "summary.json")):
        fail(2, f"--out {args.out}: holds a summary already; give a new folder")
    return args


class Bench:
    """The cluster, the runs made on it and their record."""

    def __init__(self, args):
        self.args = args
        os.makedirs(args.out, exist_ok=True)
        self.out = os.path.abspath(args.out)
        self.runs_path = os.path.join(self.out, "runs.jsonl")
        self.commands_path = os.path.join(self.out, "commands.txt")
        status = bounded([CLUSTER, "status"], 120, "slurm-cluster.sh status")
        if status.returncode != 0:
            fail(3, "the Slurm test cluster is not up: scripts/slurm-cluster.sh up")
        self.nodes = self.cluster("nodes").split()
        self.port = 29500
        self.done = {}
        if args.resume:
            with open(self.runs_path, encoding="utf-8") as f:
                self.done = {run["label"]: run for run in map(json.loads, f)}

    def cluster(self, *words):
        p = bounded([CLUSTER, *words], 600, f"slurm-cluster.sh {' '.join(words)}")
        if p.returncode != 0:
            fail(3, f"slurm-cluster.sh {' '.join(words)}: exit {p.returncode}: {p.stderr.strip()[-400:]}")
        return p.stdout

    def srun(self, words, label, attempts=1):
        """Runs `words` on the cluster; (stdout, wall seconds). Every command is written down.
        A job that fails is run again up to `attempts` times in all: one transient abort
        (a framework's worker dying at start-up) should not cost an hour's proof."""
        for attempt in range(attempts):
            started = time.monotonic()
            p = bounded([CLUSTER, "run", *words], JOB_TIMEOUT_S, label, cwd=self.out)
            took = time.monotonic() - started
            with open(self.commands_path, "a", encoding="utf-8") as f:
                f.write(f"# {label}: exit {p.returncode}, {took:.1f} s\n{shlex.join(words)}\n")
            if p.returncode == 0:
                return p.stdout, took
            print(f"# {label}: exit {p.returncode} (attempt {attempt + 1} of {attempts})", flush=True)
        fail(3, f"{label}: exit {p.returncode}: {p.stderr.strip()[-800:]}")

    def job(self, settings, label, trace=None):
        """One run of the real job with `settings` (a dict); its result line with `wall_seconds`."""
        self.port += 1
        if label in self.done:
            return self.done[label]
        settings_path = os.path.join(self.out, "settings", f"{label}.json")
        os.makedirs(os.path.dirname(settings_path), exist_ok=True)
        with open(settings_path, "w", encoding="utf-8") as f:
            json.dump(settings, f)
        words = ["srun", "-N", str(len(self.nodes)), "--ntasks-per-node", "1", "env", "OMP_NUM_THREADS=1",
                 self.args.python, os.path.join(HERE, "training_job.py"), "--framework", self.args.framework,
                 "--shape", self.args.shape, "--settings", settings_path, "--steps", str(self.args.steps),
                 "--master", f"{self.nodes[0]}:{self.port}"]
        if trace:
            words += ["--trace", trace]
        stdout, took = self.srun(words, label, attempts=2)
        lines = [line for line in stdout.splitlines() if line.startswith("{")]
        if not lines:
            fail(3, f"{label}: the job printed no result line")
        result = dict(json.loads(lines[-1]), label=label, wall_seconds=took, requested=settings)
        with open(self.runs_path, "a", encoding="utf-8") as f:
            f.write(json.dumps(result) + "\n")
        print(f"# {label}: median step {result['median_seconds']:.3f} s ({took:.0f} s on the cluster)", flush=True)
        return result


def model_flags(shape):
    s = tiny_llama.SHAPES[shape]
    flags = ["--layers", s["layers"], "--hidden", s["hidden"], "--ffn", s["ffn"], "--heads", s["heads"],
             "--kv-heads", s["kv_heads"], "--vocab", s["vocab"], "--seq", s.get("seq", tiny_llama.SEQ),
             "--micro-batch", tiny_llama.BATCH, "--dtype", "float32"]
    if s["tied"]:
        flags.append("--tie-embeddings")
    return [str(flag) for flag in flags]


def settings_flags(framework, settings, out):
    """bench-patterns' flags for the start settings."""
    if framework == "ddp":
        return ["--bucket-cap-mb", str(settings["bucket_cap_mb"])] if "bucket_cap_mb" in settings else []
    if framework == "fsdp2":
        return ["--fsdp-version", "2",
                "--fsdp-sharding", "full_shard" if settings.get("reshard_after_forward", True) else "shard_grad_op",
                "--forward-prefetch", "1" if settings.get("forward_prefetch", False) else "0",
                "--fsdp-unit", str(settings.get("fsdp_unit_layers", 1))]
    path = os.path.join(out, "start-ds-config.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"zero_optimization": {"stage": 3, **settings.get("zero_optimization", {})}}, f)
    return ["--deepspeed-config", path]


def tune(bench, start):
    """bench-patterns --tune against the start's trace: (recommended settings, cluster seconds, tune.json)."""
    a = bench.args
    trace = os.path.join(bench.out, "trace-start")
    traced = bench.job(start, "trace-start", trace=trace)
    out = bench.out
    words = ["srun", "--mpi=pmix", "-N", str(len(bench.nodes)), "--ntasks-per-node", "1",
             os.path.join(a.bin, "bench-patterns"), "--backend", "mpi", "--pattern", PATTERN_OF[a.framework],
             *model_flags(a.shape), *settings_flags(a.framework, start, out), "--tune=1",
             "--tune-budget", str(a.tune_budget), "--tune-against", trace,
             "--tune-output", os.path.join(out, "recommended.json"), "--json", os.path.join(out, "tune.json"),
             "--csv", os.path.join(out, "tune.csv")]
    if bench.args.resume and os.path.exists(os.path.join(out, "tune.txt")):
        took = tune_seconds_recorded(bench.commands_path)
    else:
        stdout, took = bench.srun(words, "tune")
        with open(os.path.join(out, "tune.txt"), "w", encoding="utf-8") as f:
            f.write(stdout)
    with open(os.path.join(out, "recommended.json"), encoding="utf-8") as f:
        recommended = json.load(f)
    with open(os.path.join(out, "tune.json"), encoding="utf-8") as f:
        tuned = json.load(f)
    return recommended, traced["wall_seconds"] + took, tuned


def tune_seconds_recorded(commands_path):
    """The wall time of the last tuning that ended well, from commands.txt."""
    seconds = None
    with open(commands_path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("# tune: exit 0, "):
                seconds = float(line.split(", ")[1].split()[0])
    if seconds is None:
        fail(2, f"--resume: {commands_path} records no tuning that ended well")
    return seconds


def knob_value(text):
    """A knob's value from bench-patterns' trial records, as the framework takes it."""
    if text in ("true", "false"):
        return text == "true"
    number = float(text)
    return int(number) if number.is_integer() and "e" not in text and "." not in text else number


def search_space(tuned, start):
    """{knob: candidates} from bench-patterns' trials: the same knobs over the same values."""
    space = {}
    for trial in tuned["trials"]:
        for key, value in trial.items():
            if key.startswith("zero_optimization.") or key == "bucket_cap_mb" or key in FSDP2_KNOBS:
                values = space.setdefault(key, [])
                if knob_value(value) not in values:
                    values.append(knob_value(value))
    return space


def as_settings(framework, choice, start):
    """A search trial's knobs as training_job.py's settings, over the start's."""
    if framework != "zero3":
        return {**start, **choice}
    zero = dict(start.get("zero_optimization", {}))
    for key, value in choice.items():
        zero[key.removeprefix("zero_optimization.")] = value
    return {**start, "zero_optimization": zero}


def with_fragment(framework, fragment, start):
    """The start's settings with what --tune-output wrote over them."""
    if framework != "zero3":
        return {**start, **fragment}
    return {**start, "zero_optimization": {**start.get("zero_optimization", {}),
                                           **fragment.get("zero_optimization", {})}}


def read_start(path, framework):
    """The start settings; for ZeRO-3 with the stage said, as --tune-output says it."""
    try:
        start = read_settings_file(path, "--start", framework)
    except SettingsError as e:
        fail(2, str(e))
    if framework == "zero3":
        start = {**start, "zero_optimization": {**start.get("zero_optimization", {}), "stage": 3}}
    return start


def search(bench, space, start):
    """The real search: (its fastest trial's settings, their median step, cluster seconds)."""
    plan = summary.search_plan(space, bench.args.search_trials)
    best, spent = None, 0.0
    for index, choice in enumerate(plan):
        result = bench.job(as_settings(bench.args.framework, choice, start), f"search-{index + 1}")
        spent += result["wall_seconds"]
        if best is None or result["median_seconds"] < best[1]:
            best = (result["requested"], result["median_seconds"])
    return best[0], best[1], spent


def compare(bench, sides):
    """{side: side_figures} from --runs interleaved rounds; sides with the same settings share runs."""
    distinct = {}
    for name, settings in sides.items():
        key = json.dumps(settings, sort_keys=True)
        distinct.setdefault(key, (name, settings))
    medians = {name: [] for name, _ in distinct.values()}
    for index, name in enumerate(summary.interleaved_order(list(medians), bench.args.runs)):
        settings = next(s for n, s in distinct.values() if n == name)
        medians[name].append(bench.job(settings, f"compare-{index + 1}-{name}")["median_seconds"])
    figures = {}
    for name, settings in sides.items():
        figures[name] = summary.side_figures(medians[distinct[json.dumps(settings, sort_keys=True)][0]])
    return figures


def main(argv=None):
    args = parse_arguments(argv)
    start = read_start(args.start, args.framework)
    bench = Bench(args)
    for node in bench.nodes:
        bench.cluster("degrade", node, args.rate)
    try:
        fragment, tune_seconds, tuned = tune(bench, start)
        recommended = with_fragment(args.framework, fragment, start)
        best, _, search_seconds = search(bench, search_space(tuned, start), start)
        figures = compare(bench, {"start": start, "recommended": recommended, "best": best})
    finally:
        for node in bench.nodes:
            bench.cluster("degrade", node, "off")
    changes = json.dumps(recommended, sort_keys=True) != json.dumps(start, sort_keys=True)
    result = {"framework": args.framework, "shape": args.shape, "rate": args.rate, "nodes": len(bench.nodes),
              "steps_per_run": args.steps, "start": start, "recommended": recommended, "search_best": best,
              "sides": figures, "tune_cluster_seconds": tune_seconds, "search_cluster_seconds": search_seconds,
              "search_trials": args.search_trials,
              "verdicts": summary.verdicts(figures["start"], figures["recommended"], figures["best"], changes,
                                           tune_seconds, search_seconds)}
    write_summary(bench.out, result)


def write_summary(out, result):
    lines = [f"{result['framework']} on {result['nodes']} nodes at {result['rate']} ({result['shape']} model, "
             f"{result['steps_per_run']} timed steps a run)"]
    for name, side in result["sides"].items():
        lines.append(f"{name:12} median {side['median']:.3f} s, runs {side['fastest']:.3f}-{side['slowest']:.3f} s "
                     f"({len(side['runs'])} runs)")
    lines.append(f"cluster time: tune {result['tune_cluster_seconds']:.0f} s, search "
                 f"{result['search_cluster_seconds']:.0f} s ({result['search_trials']} trials)")
    for name, verdict in result["verdicts"].items():
        lines.append(f"{'met' if verdict['met'] else 'NOT met':8} {name}: {verdict['why']}")
    with open(os.path.join(out, "summary.json.part"), "w", encoding="utf-8") as f:
        json.dump(result, f, indent=2)
    os.replace(os.path.join(out, "summary.json.part"), os.path.join(out, "summary.json"))
    with open(os.path.join(out, "summary.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
