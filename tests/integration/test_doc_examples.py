"""Every example of README.md and docs/*.md runs as written, after the build.

The examples are the Example column of README.md's table of commands and the command lines
of every fenced sh, bash or console block of docs/*.md (comment lines dropped, `\\` lines
joined, a `for ... done` loop kept whole). Each block runs in a folder of its own that looks
like the repository root after `scripts/run.sh`: build/, scripts/, tests/, slurm/, bench/
are the repository's, and results/local/latest/ holds a small run of bench-collectives and
bench-topology. An example must exit 0, or the code listed for it in EXIT_CODES.

This machine has no GPU, no Slurm and 2 cores, so an example is run with these
substitutions (docs/build.md, "The documentation's examples", says the same):

1. `mpirun -np N` -> `mpirun --allow-run-as-root --oversubscribe -np min(N, 4)`.
2. `srun [flags] PROGRAM ...` (a job step of Slurm) -> `mpirun --allow-run-as-root
   --oversubscribe -np 4 PROGRAM ...`: the step's ranks become 4 local ranks.
3. A program without a path (`bench-collectives`, as installed) is found in build/bench/ or
   build/examples/, which come first on PATH.
4. bench-collectives: sizes above 1 MiB (-b, -e) become 1M, `-e 1M` is added where the
   example leaves the default (64 MiB), and `-n 2 -w 1` where it sets no -n: the README's
   `-b 8 -e 8G -c 1` runs as `-b 8 -e 1M -c 1 -n 2 -w 1` (8 GiB cannot be held by 4 ranks
   of a 24 GiB machine, and takes minutes).
5. bench-patterns running a --preset: the model is cut to two small layers (`--layers 2
   --hidden 512 --ffn 2048 --vocab 1000 --heads 8 --kv-heads 8`, which override the
   preset's); every run that communicates gets `-n 1 -w 0`; `--tune-budget S` -> 10.
6. bench-validate --soak D -> --soak 5s; bare-mpi-loop (docs/methodology.md): at most
   10000 iterations and `repeat=1`.
7. Files the user has: traces/ is tests/fixtures/traces/zero3 (4 ranks: a prediction of
   its --schedule is made for `--nodes 1 --gpus-per-node 4`); sweep.csv, baseline.*,
   last-month.*, today.*, new.json are copies of the run under results/local/latest/ (CSV
   or JSON by their extension), unless the block itself writes them.

What cannot run here is listed in NOT_HERE with the reason: nothing is left out silently.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
BUILD = os.environ.get("COMMBENCH_BUILD_DIR", "")
NP_HERE = 4
MPIRUN = f"mpirun --allow-run-as-root --oversubscribe"
LINKED = ("bench", "scripts", "slurm", "tests", "docs", "examples", "src", "include", "cmake")

NEEDS_GPU = "needs GPUs (NCCL backend)"
NEEDS_SLURM = "needs a Slurm cluster (sbatch)"
THE_BUILD = "the set-up itself: this test runs on ctest's build; tests/integration/test_scripts.py runs scripts/run.sh"
MEASUREMENT = "a measurement of commbench's own cost that runs for minutes by design (docs/performance.md)"
NOT_HERE = {
    "scripts/run.sh": THE_BUILD,
    "scripts/test.sh": "runs every test, this one included",
    "scripts/slurm-cluster.sh up": "brings up the Slurm test cluster (the slurm_* tests bring up their own)",
    "scripts/slurm-cluster.sh down": "takes the Slurm test cluster down (the slurm_* tests do, after theirs)",
    "python3 scripts/closed-loop/prove.py --framework zero3 --start users-before.json --rate 200mbit "
    "--python /path/to/venv/bin/python --out results/closed-loop/zero3-200mbit":
        "an hour of the Slurm test cluster with PyTorch and DeepSpeed (closed_loop_* test its parts)",
    "cmake -S . -B build -DCOMMBENCH_WITH_MPI=ON": THE_BUILD,
    "cmake --build build -j": THE_BUILD,
    "cmake -S . -B build && cmake --build build -j --target micro-harness-overhead": THE_BUILD,
    "srun -N 2 --ntasks-per-node 8 --gpus-per-task 1 bench-collectives -b 8 -e 8G -c 1": NEEDS_GPU,
    "bench-collectives -g 8 -b 8 -e 8G": NEEDS_GPU + ": one process driving 8 GPUs",
    "bench-p2p --local --both-ways --csv node.csv": NEEDS_GPU + ": --local measures the GPUs of the node",
    "srun --mpi=pmix -N 16 bench-validate --soak 1h --csv soak.csv --json soak.json":
        "a soak needs a job over at least 2 nodes: Slurm (slurm_Soak runs one on the test cluster)",
    "srun -N 16 --ntasks-per-node=1 --gpus-per-node=8 bench-p2p --local --fail-on-outlier": NEEDS_GPU,
    "srun --mpi=pmix -N 2 --ntasks-per-node=8 --gpus-per-task=1 bench-collectives --check": NEEDS_GPU,
    "srun -N 4 --ntasks-per-node 8 bench-replay traces/ --measure-fabric --backend nccl --json replay.json": NEEDS_GPU,
    "srun -N 4 --ntasks-per-node 8 bench-replay traces/ --replay --backend nccl -n 10 --json replayed.json "
    "--trace replayed.trace.json": NEEDS_GPU,
    "nsys profile --trace=cuda,nvtx,osrt --capture-range=cudaProfilerApi --capture-range-end=stop "
    "-o commbench-%q{OMPI_COMM_WORLD_RANK} bench-collectives --op allreduce -b 8 -e 1G "
    "--profile-range 'allreduce 64MiB'": "needs Nsight Systems and a GPU (tests/integration/test_profiling.py)",
    "srun nsys profile --trace=nvtx,cuda --output=rank%q{SLURM_PROCID} python train.py":
        "needs Slurm, Nsight Systems, a GPU and the user's train.py",
    "bench-replay reports/": "the user's Nsight Systems reports (tests/fixtures/nsys are read by test_replay_nsys)",
    "bench-replay rank*.nsys-rep": "the user's Nsight Systems reports, and nsys to export them",
    "build/bench/bench-replay rank0.json.gz rank1.json.gz … --csv replay.csv --json replay.json":
        "the user's trace files ('…' stands for the rest of them)",
    "build/bench/bench-replay train.log --ranks 64": "the user's DeepSpeed comms log (test_replay_deepspeed_log)",
    "build/bench/bench-topology --hwloc-xml nvidiaDGX2.xml --json p.json --force":
        "hwloc's test data, not in this repository",
    "build/bench/bench-topology --hwloc-xml node.xml --nodes 8": "the user's exported hwloc topology",
    "scripts/plot ddp.json fsdp.json zero3.json -o step.png --html step.html": "the user's bench-patterns runs",
    "scripts/plot soak-1234/soak.json -o soak.png": "the user's soak (tests/integration/test_validate_soak.py plots one)",
    "srun -N 2 --ntasks-per-node=8 bench-collectives -b 8 -e 8G --csv good-2x8.csv": NEEDS_GPU + " and Slurm",
    "srun -N 2 --ntasks-per-node=8 bench-collectives -b 8 -e 8G --baseline good-2x8.csv "
    "--thresholds acceptance.txt --json check.json": "the user's baseline and rules, on Slurm nodes",
    "python3 bench/compare_with_bare_loop.py --build build --ranks 2 --launches 5 --sizes "
    "\"8 B,1 KiB,1 MiB,16 MiB\"": MEASUREMENT,
    "mpirun -q --oversubscribe -np 2 build/bench/micro/micro-harness-overhead --benchmark_color=false": MEASUREMENT,
    "bench/pattern_overhead.sh build": MEASUREMENT,
    "python3 bench/replay_read_speed.py --bytes 1G": MEASUREMENT,
    "python3 bench/replay_read_speed.py --format nsys --bytes 1G": MEASUREMENT,
    "python3 bench/replay_ranks_speed.py --ranks 16 --bytes 24M --np 1,2,4": MEASUREMENT,
    "python3 bench/replay_vs_hta.py --sizes 200M,1G --hta-python /work/hta-venv/bin/python":
        MEASUREMENT + ", with HTA in its own virtual environment",
    "python3 bench/nvtx_overhead.py --build build --ranks 2 --launches 7 --size 8": MEASUREMENT,
    "scripts/slurm-cluster.sh exec cb-node1 build/bench/micro/micro-nic-counter-read":
        "needs the namespaced Slurm test cluster (tests/integration/test_slurm.py)",
    "python3 bench/nic_sampler_overhead.py --rounds 20 --out DIR": MEASUREMENT + ", on the Slurm test cluster",
    "python3 bench/nic_sampler_overhead.py --rounds 20 --control --out DIR": MEASUREMENT + ", on the Slurm test cluster",
}
NOT_HERE_PATTERNS = (  # whole families, by what the command starts with
    (r"^sbatch\b", NEEDS_SLURM),
    (r"^scripts/slurm-cluster\.sh\b", "needs the namespaced Slurm test cluster (tests/integration/test_slurm.py)"),
)
# Documented exit codes other than 0 that an example may end with here.
EXIT_CODES = {
    # An outlier (exit 1) is an honest finding on 4 ranks sharing 2 cores.
    "mpirun -np 8 build/bench/bench-p2p --schedule ring --both-ways --fail-on-outlier": {0, 1},
    "mpirun -np 8 bench-p2p --schedule ring --both-ways --fail-on-outlier": {0, 1},
    # A degraded device or an odd node (exit 1): a VM's devices are what they are.
    "srun -N 64 --ntasks-per-node=1 bench-topology --json topology.json": {0, 1},
    "srun -N 64 --ntasks-per-node=1 bench-topology --json topology.json --csv links.csv": {0, 1},
    "build/bench/bench-topology": {0, 1},
    "build/bench/bench-topology --json p.json --force": {0, 1},
    "mpirun -q --oversubscribe -np 4 build/bench/bench-topology --json p.json --force": {0, 1},
    # A bad node or link (exit 1) on an oversubscribed machine.
    "srun --mpi=pmix bench-validate --csv v.csv --json v.json": {0, 1},
    # The plan on a cluster with a node and a link degraded on purpose finds them: exit 1.
    "bench-validate --simulate 1024 --degrade node:7,link:3-40": {1},
}
USER_FILES = ("sweep.csv", "baseline.csv", "baseline.json", "last-month.csv", "last-month.json", "today.csv",
              "today.json", "new.json")


def readme_table_examples():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        rows = [line for line in f if line.startswith("| `bench-")]
    return [("README.md", re.findall(r"`([^`]*)`", row.split("|")[3])[0]) for row in rows]


def block_commands(text):
    """The command lines of one fenced block: comments dropped, continuations joined."""
    commands, pending, loop = [], "", []
    for line in text.splitlines():
        line = re.sub(r"\s+#\s.*$", "", line).rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if loop or line.startswith("for "):
            loop.append(line)
            if line.strip() == "done":
                commands.append("\n".join(loop))
                loop = []
            continue
        if line.endswith("\\"):
            pending += line[:-1].strip() + " "
            continue
        commands.append(re.sub(r"\s+", " ", pending + line.strip()))
        pending = ""
    return commands


def doc_blocks():
    """(file, [commands]) of every fenced sh/bash/console block of docs/*.md."""
    blocks = []
    docs = os.path.join(ROOT, "docs")
    for name in sorted(os.listdir(docs)):
        if name.endswith(".md"):
            with open(os.path.join(docs, name), encoding="utf-8") as f:
                for m in re.finditer(r"^```(?:sh|bash|console)\n(.*?)^```", f.read(), re.S | re.M):
                    blocks.append((f"docs/{name}", block_commands(m.group(1))))
    return blocks


def reason_not_here(command):
    if command in NOT_HERE:
        return NOT_HERE[command]
    for pattern, reason in NOT_HERE_PATTERNS:
        if re.search(pattern, command):
            return reason
    if "$(sbatch" in command:
        return NEEDS_SLURM
    return None


def launched(command):
    """Rules 1 and 2: the launcher as this machine has it."""
    m = re.match(r"^mpirun((?: -\S+(?: \S+)??)*?) -np (\d+) (.*)$", command)
    if m:
        flags = re.sub(r" --(oversubscribe|allow-run-as-root)\b", "", m.group(1))
        return f"{MPIRUN}{flags} -np {min(int(m.group(2)), NP_HERE)} {m.group(3)}"
    m = re.match(r"^srun(?: -\S+(?: \d+)?)* (bench-\S+.*)$", command)
    if m:
        return f"{MPIRUN} -np {NP_HERE} {m.group(1)}"
    return command


def scaled(command):
    """Rules 4 to 6: sizes, models and durations this machine runs in seconds."""
    if re.search(r"(^|[ /])bench-collectives ", command + " "):
        def cap(m):
            return f"{m.group(1)} 1M" if parse_bytes(m.group(2)) > 1 << 20 else m.group(0)
        command = re.sub(r"(-[be]|--min-bytes|--max-bytes) (\S+)", cap, command)
        if not re.search(r" (-e|--max-bytes) ", command):
            command += " -e 1M"
        if not re.search(r" (-n|--iters) ", command):
            command += " -n 2 -w 1"
    if re.search(r"(^|[ /])bench-patterns ", command) and "--predict" not in command and "--dry-run" not in command:
        if "--preset" in command:
            command += " --layers 2 --hidden 512 --ffn 2048 --vocab 1000 --heads 8 --kv-heads 8"
        command += " -n 1 -w 0"
        command = re.sub(r"--tune-budget \d+", "--tune-budget 10", command)
    if "--schedule step.jsonl --predict" in command:  # traces/ stands in with 4 ranks
        command = re.sub(r"--nodes \d+ --gpus-per-node \d+", "--nodes 1 --gpus-per-node 4", command)
    m = re.search(r"bare-mpi-loop (\S+) (\S+) (\d+)", command)
    if m and int(m.group(3)) > 10000:
        command = command.replace(m.group(0), f"bare-mpi-loop {m.group(1)} {m.group(2)} 10000")
    command = re.sub(r"(bare-mpi-loop .*)repeat=\d+", r"\1repeat=1", command)
    return re.sub(r"--soak \S+", "--soak 5s", command)


def parse_bytes(text):
    m = re.fullmatch(r"(\d+)([KMGT]?)(?:i?B)?", text)
    if not m:
        return 0
    return int(m.group(1)) << (10 * " KMGT".index(m.group(2) or " "))


def substituted(command):
    return scaled(launched(command))


def written_files(commands):
    text = " ".join(commands)
    return set(re.findall(r"(?:--csv|--json|-o|--dump-schedule|--html) (\S+)", text))


def all_examples():
    """(source, [commands]) for README's table (one block) and every docs block, in order."""
    return [("README.md", [command for _, command in readme_table_examples()])] + doc_blocks()


class Extraction(unittest.TestCase):
    """The extractor and the substitutions, on the documents as they are: no build needed."""

    def test_the_readme_tables_commands_are_found(self):
        commands = [command for _, command in readme_table_examples()]
        self.assertEqual(len(commands), 7, commands)
        self.assertIn("mpirun -np 8 build/bench/bench-collectives -b 8 -e 8G -c 1", commands)
        self.assertIn("mpirun -np 4 build/examples/bench-groups -k 2,4", commands)

    def test_blocks_are_split_into_commands(self):
        text = ("# a comment\nmpirun -np 8 prog --a 1 \\\n    --b 2   # trailing comment\n\n"
                "for n in 1 2; do\n  prog $n | grep ^x\ndone\nlast\n")
        self.assertEqual(block_commands(text), ["mpirun -np 8 prog --a 1 --b 2",
                                                "for n in 1 2; do\n  prog $n | grep ^x\ndone", "last"])
        commands = [c for _, block in doc_blocks() for c in block]
        self.assertGreater(len(commands), 60)
        self.assertIn("bench-validate --simulate 1024 --degrade node:7,link:3-40", commands)

    def test_substitutions(self):
        self.assertEqual(substituted("mpirun -np 8 build/bench/bench-collectives -b 8 -e 8G -c 1"),
                         f"{MPIRUN} -np 4 build/bench/bench-collectives -b 8 -e 1M -c 1 -n 2 -w 1")
        self.assertEqual(substituted("srun --mpi=pmix bench-validate --csv v.csv --json v.json"),
                         f"{MPIRUN} -np 4 bench-validate --csv v.csv --json v.json")
        self.assertEqual(substituted("mpirun -q -x GLIBC_TUNABLES -np 2 build/bench/bare-mpi-loop x"),
                         f"{MPIRUN} -q -x GLIBC_TUNABLES -np 2 build/bench/bare-mpi-loop x")
        self.assertEqual(substituted("srun -N 64 --ntasks-per-node=1 bench-topology --json t.json"),
                         f"{MPIRUN} -np 4 bench-topology --json t.json")
        self.assertIn("--layers 2", substituted("mpirun -np 8 build/bench/bench-patterns --preset llama-3-8b"))
        self.assertEqual(parse_bytes("64KiB"), 65536)

    def test_every_example_left_out_is_still_an_example(self):
        commands = {c for _, block in all_examples() for c in block}
        self.assertEqual(set(NOT_HERE) - commands, set(), "stale entries of NOT_HERE")
        self.assertEqual(set(EXIT_CODES) - commands, set(), "stale entries of EXIT_CODES")

    def test_the_substitutions_are_documented(self):
        with open(os.path.join(ROOT, "docs", "build.md"), encoding="utf-8") as f:
            text = f.read()
        self.assertIn("## The documentation's examples", text)
        for words in ("--allow-run-as-root --oversubscribe -np", "srun", "-e 1M", "--layers 2", "--soak 5s",
                      "tests/fixtures/traces/zero3"):
            self.assertIn(words, text)

    def test_a_failing_example_is_reported(self):
        with tempfile.TemporaryDirectory() as folder:
            failure = run_example("docs/x.md", "sh -c 'exit 3'", folder, dict(os.environ))
        self.assertIsNotNone(failure)
        self.assertIn("exit 3", failure)


def run_example(source, command, folder, env):
    """None when the example ends as documented, else a paragraph saying how it failed."""
    reason = reason_not_here(command)
    if reason is not None:
        return None
    ran = substituted(command)
    began = time.monotonic()
    try:
        p = subprocess.run(["bash", "-c", ran], cwd=folder, env=env, capture_output=True, text=True, timeout=150)
        code, tail = p.returncode, (p.stdout + p.stderr)[-1500:]
    except subprocess.TimeoutExpired:
        code, tail = "timeout", "(ran past 150 s)"
    if os.environ.get("COMMBENCH_EXAMPLE_TIMES"):
        print(f"{time.monotonic() - began:6.1f} s  {ran}", file=sys.stderr)
    if code in EXIT_CODES.get(command, {0}):
        return None
    return f"{source}: {command}\n  ran: {ran}\n  exit {code}\n{tail}"


@unittest.skipUnless(BUILD, "COMMBENCH_BUILD_DIR names no build")
class Examples(unittest.TestCase):
    """Every example, in a folder per block that looks like the repository after run.sh."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="commbench-doc-examples-")
        cls.env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                       PATH=os.pathsep.join([os.path.join(BUILD, "bench"), os.path.join(BUILD, "examples"),
                                             "/usr/bin", "/bin"]))
        cls.latest = os.path.join(cls.dir, "results", "local", "setup-run")
        os.makedirs(cls.latest)
        os.symlink("setup-run", os.path.join(cls.dir, "results", "local", "latest"))
        # What scripts/run.sh leaves, small: a sweep of the four collectives and the probe.
        for args, codes in (([os.path.join(BUILD, "bench", "bench-collectives"), "-b", "1K", "-e", "1M", "--op",
                              "allreduce,allgather,reducescatter,broadcast", "-n", "2", "-w", "1", "--csv",
                              "collectives.csv", "--json", "collectives.json"], {0}),
                            ([os.path.join(BUILD, "bench", "bench-topology"), "--csv", "topology-links.csv",
                              "--json", "topology.json"], {0, 1})):
            p = subprocess.run(MPIRUN.split() + ["-np", str(NP_HERE)] + args, cwd=cls.latest, env=cls.env,
                               capture_output=True, text=True, timeout=300)
            assert p.returncode in codes, p.stderr

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def block_folder(self, index, commands):
        folder = os.path.join(self.dir, f"block-{index}")
        os.mkdir(folder)
        for name in LINKED:
            os.symlink(os.path.join(ROOT, name), os.path.join(folder, name))
        os.symlink(BUILD, os.path.join(folder, "build"))
        os.symlink(os.path.join(self.dir, "results"), os.path.join(folder, "results"))
        os.symlink(os.path.join(ROOT, "tests", "fixtures", "traces", "zero3"), os.path.join(folder, "traces"))
        written = written_files(commands)
        for name in USER_FILES:
            if name not in written:
                shutil.copy(os.path.join(self.latest, "collectives" + os.path.splitext(name)[1]),
                            os.path.join(folder, name))
        return folder

    def test_every_example_runs_as_written(self):
        failures, ran = [], 0
        for index, (source, commands) in enumerate(all_examples()):
            folder, env = self.block_folder(index, commands), dict(self.env)
            for command in commands:
                exported = re.fullmatch(r"export (\w+)=(\S+)", command)
                if exported:  # for the block's later commands, as in one shell
                    env[exported.group(1)] = exported.group(2)
                    continue
                failure = run_example(source, command, folder, env)
                ran += reason_not_here(command) is None
                if failure:
                    failures.append(failure)
        self.assertGreater(ran, 30)
        self.assertEqual(failures, [], "\n\n".join(failures))
