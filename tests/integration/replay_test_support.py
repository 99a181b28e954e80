"""What the bench-replay tests share: the binaries under test, the fixtures
(tests/fixtures/traces) and readers of their raw JSON that do not go through
bench-replay's own code."""
import gzip
import json
import os
import shutil
import subprocess
import tempfile
import unittest

BIN = os.environ.get("COMMBENCH_BENCH_REPLAY", "build/bench/bench-replay")
COLLECTIVES = os.environ.get("COMMBENCH_BENCH_COLLECTIVES", "")
MPIEXEC = os.environ.get("COMMBENCH_MPIEXEC", "")
PATTERNS = os.environ.get("COMMBENCH_BENCH_PATTERNS", "")
HERE = os.path.dirname(os.path.abspath(__file__))
TRACES = os.path.join(HERE, "..", "fixtures", "traces")
CASES = ("ddp-default", "ddp-bucket4mb", "fsdp2", "zero3", "straggler", "llama-ddp", "llama-fsdp2", "llama-zero3",
         "llama-fsdp2-3ranks", "llama-zero3-3ranks", "llama-ddp-bucket1mb", "llama-ddp-accum2", "llama-fsdp2-keep",
         "llama-zero1", "llama-zero2", "llama-zero3-small", "llama-zero3-nooverlap", "llama-zero3-2ranks",
         "llama-fsdp1", "llama-fsdp1-3ranks", "llama-fsdp1-keep", "llama-fsdp2-3steps", "llama-tied-ddp", "llama-tied-fsdp2", "llama-tied-zero3",
         "ddp-sleep-before-backward", "llama-zero3-noreuse", "llama-zero3-noprefetch", "llama-zero3-users")


# bench-patterns' flags for the llama-* fixtures' model (tiny_llama.py), and for its
# "tied" shape (the llama-tied-* fixtures).
LLAMA_MODEL = ["--layers", "2", "--hidden", "256", "--ffn", "512", "--heads", "4", "--kv-heads", "2", "--vocab", "1000",
               "--seq", "32", "--micro-batch", "4", "--dtype", "float32"]
TIED_MODEL = ["--layers", "3", "--hidden", "192", "--ffn", "448", "--heads", "6", "--kv-heads", "6", "--vocab", "1001",
              "--tie-embeddings", "--seq", "32", "--micro-batch", "4", "--dtype", "float32"]

# bench-patterns' flags for each llama case's framework settings (record_step.py's
# LLAMA_SETTINGS); the DeepSpeed cases take the ds_config.json recorded beside the trace.
FRAMEWORK_FLAGS = {
    "llama-ddp": ["--pattern", "ddp"],
    "llama-ddp-bucket1mb": ["--pattern", "ddp", "--bucket-cap-mb", "1"],
    "llama-ddp-accum2": ["--pattern", "ddp", "--grad-accum", "2"],
    "llama-fsdp2": ["--pattern", "fsdp"],
    "llama-fsdp2-3ranks": ["--pattern", "fsdp"],
    "llama-fsdp2-keep": ["--pattern", "fsdp", "--fsdp-sharding", "shard_grad_op"],
    "llama-fsdp2-3steps": ["--pattern", "fsdp"],
    "llama-fsdp1": ["--pattern", "fsdp", "--fsdp-version", "1"],
    "llama-fsdp1-3ranks": ["--pattern", "fsdp", "--fsdp-version", "1"],
    "llama-fsdp1-keep": ["--pattern", "fsdp", "--fsdp-version", "1", "--fsdp-sharding", "shard_grad_op"],
    "llama-tied-ddp": ["--pattern", "ddp"],
    "llama-tied-fsdp2": ["--pattern", "fsdp"],
    "llama-hsdp": ["--pattern", "fsdp", "--fsdp-sharding", "hybrid_shard"],
    "llama-fsdp1-hybrid": ["--pattern", "fsdp", "--fsdp-version", "1", "--fsdp-sharding", "hybrid_shard"],
}


def model_of(case):
    return TIED_MODEL if case.startswith("llama-tied-") else LLAMA_MODEL


def pattern_flags(case, folder=None):
    """bench-patterns' flags for a llama case's framework and settings (not its model)."""
    if case in FRAMEWORK_FLAGS:
        return FRAMEWORK_FLAGS[case]
    return ["--deepspeed-config", os.path.join(folder or os.path.join(TRACES, case), "ds_config.json")]


def ranks_of(case):
    """The ranks a case was recorded on: 3, 2 or 1 for a *-3ranks, *-2ranks or *-1rank case, else 4."""
    return 3 if case.endswith("-3ranks") else 2 if case.endswith("-2ranks") else 1 if case.endswith("-1rank") else 4

# The c10d operators' names as this test reads them (not bench-replay's table).
C10D_OPS = {"c10d::allreduce_": "allreduce", "c10d::_allgather_base_": "allgather", "c10d::allgather_": "allgather",
            "c10d::_reduce_scatter_base_": "reducescatter", "c10d::broadcast_": "broadcast",
            "c10d::barrier": "barrier"}
ELEMENT_BYTES = {"float": 4, "c10::BFloat16": 2, "c10::Half": 2, "double": 8}


def run(*args):
    p = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def replay_traces_json(folder, case):
    """bench-replay's JSON of a fixture case's traces, written into folder."""
    json_path = os.path.join(folder, case + "-traces.json")
    code, _, err = run(os.path.join(TRACES, case), "--json", json_path, "--force")
    assert code == 0, err
    with open(json_path) as f:
        return json.load(f)


def load(path):
    with gzip.open(path, "rt") as f:
        return json.load(f)


def rank_files(case):
    return sorted(os.path.join(TRACES, case, name) for name in os.listdir(os.path.join(TRACES, case))
                  if name.startswith("rank") and name.endswith(".json.gz"))


def raw_counts(doc):
    """Calls per operation from the operators on the calling thread."""
    counts = {}
    for event in doc["traceEvents"]:
        if event.get("ph") == "X" and event.get("cat") == "cpu_op" and event.get("name") in C10D_OPS:
            op = C10D_OPS[event["name"]]
            counts[op] = counts.get(op, 0) + 1
    return counts


def raw_gloo_bytes(doc):
    """Bytes gloo's ranges moved, by the range's name: an allgather's range holds one
    rank's part, so the gathered output is that times the world."""
    world = doc["distributedInfo"]["world_size"]
    moved = {}
    for event in doc["traceEvents"]:
        name = event.get("name", "")
        if event.get("ph") != "X" or not name.startswith("gloo:") or name == "gloo:barrier":
            continue
        args = event["args"]
        elements = 1  # a scalar (no dims) is one element
        for d in args["Input Dims"][0]:
            elements *= d
        size = elements * ELEMENT_BYTES[args["Input type"][0]]
        if name == "gloo:all_gather":
            size *= world
        moved[name] = moved.get(name, 0) + size
    return moved


MPI_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_mpi_yield_when_idle="1")


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


class FolderCase(unittest.TestCase):
    """A class whose tests share one temporary folder, `self.dir`."""
    PREFIX = "commbench-replay-"

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix=cls.PREFIX)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)


# bench-patterns' group roles, as --dump-schedule names them, and their sizes on the
# hybrid cases' layout: 2 nodes of 2 ranks.
HYBRID_GROUP_SIZES = {"intra_node": 2, "inter_node": 2, "data": 4}
# A real bench-collectives sweep: --predict needs a cost for every call, the dump does not
# depend on it.
SWEEP = os.path.join(HERE, "..", "..", "results", "mpi-host-2core", "default-sweep.csv")


def hybrid_job_calls(folder):
    """(op, bytes, group size) of rank 0's calls in order, for a case recorded with PyTorch's
    flight recorder (collectives-rank0.json.gz): the trace says what each call was, the
    recorder which group ran it; with the recorder's entries, for the caller to check."""
    trace = load(os.path.join(folder, "rank0.json.gz"))["traceEvents"]
    calls = [e for e in sorted(trace, key=lambda e: e.get("ts", 0))
             if e.get("ph") == "X" and e.get("cat") == "cpu_op" and e.get("name") in C10D_OPS]
    log = load(os.path.join(folder, "collectives-rank0.json.gz"))
    entries = sorted(log["flight_recorder"]["entries"], key=lambda e: e["record_id"])
    job = []
    for call, entry in zip(calls, entries):
        op = C10D_OPS[call["name"]]
        sizes = entry["output_sizes" if op == "allgather" else "input_sizes"][0]
        elements = 1
        for d in sizes:
            elements *= d
        job.append((op, 4 * elements, len(log["groups"][entry["process_group"][0]])))
    return job, calls, entries, log


def hybrid_model_calls(case, folder, dump):
    """(op, bytes, group size) of rank 0's calls in bench-patterns' step for the case's
    settings on 2 nodes of 2 ranks; (None, stderr) when bench-patterns fails."""
    p = subprocess.run([PATTERNS, "--predict", "--from", SWEEP, "--nodes", "2", "--gpus-per-node", "2",
                        *pattern_flags(case, folder), *model_of(case), "--dump-schedule", dump, "--force"],
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        return None, p.stderr
    return [(l["op"], l["bytes"], HYBRID_GROUP_SIZES[l["group"]]) for l in read_jsonl(dump)
            if l["rank"] == 0 and l["kind"] != "compute"], ""


def merged(intervals):
    """Intervals joined where they overlap, sorted: the time they cover, each instant once."""
    out = []
    for start, end in sorted(intervals):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return out
