"""What a profiler sees of a run (issue 21): the NVTX ranges every command emits, recorded
by the minimal NVTX tool of tests/tools (loaded through NVTX_INJECTION64_PATH, as Nsight
Systems' own library is), and --profile-range's capture range."""
import csv
import glob
import os
import signal
import subprocess
import tempfile
import time
import unittest

from process_helpers import alive, children_of

COLLECTIVES = os.environ.get("COMMBENCH_BENCH_COLLECTIVES", "build/bench/bench-collectives")
PATTERNS = os.environ.get("COMMBENCH_BENCH_PATTERNS", "build/bench/bench-patterns")
VALIDATE = os.environ.get("COMMBENCH_BENCH_VALIDATE", "build/bench/bench-validate")
P2P = os.environ.get("COMMBENCH_BENCH_P2P", "build/bench/bench-p2p")
RECORDER = os.environ.get("COMMBENCH_NVTX_RECORDER", "")
MPIEXEC = os.environ.get("COMMBENCH_MPIEXEC", "mpirun")
CASE_PHASES = ["prepare", "check", "warm-up", "calibration", "timed batches", "combining results"]


def format_size(size):
    """The size as the programs name it (core/size.cpp): 8B, 4KiB, 64MiB."""
    for unit in ["B", "KiB", "MiB", "GiB"]:
        if size < 1024 or size % 1024:
            return f"{size}{unit}"
        size //= 1024
    return f"{size}TiB"


def case_name(row):
    """A CSV row's case as the measurement names it (core/op_case.cpp describe())."""
    parts = [row["op"], format_size(int(row["bytes"])), row["dtype"]]
    if row["redop"]:
        parts.append(row["redop"])
    if row["root"]:
        parts += ["root", row["root"]]
    parts.append("in-place" if row["placement"] == "in" else "out-of-place")
    return " ".join(parts)


class Range:
    def __init__(self, category, name):
        self.category, self.name, self.children, self.closed = category, name, [], False


def read_ranges(path, test):
    """The tree of ranges one process opened, per thread; asserts that no range closes
    that was not open. Returns (category names, {thread: [top-level ranges]}, open ranges)."""
    categories, roots, stacks = {}, {}, {}
    with open(path) as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            thread, kind = fields[0], fields[1]
            if kind == "category":
                categories[int(fields[2])] = fields[3]
            elif kind == "push":
                opened = Range(int(fields[2]), fields[3])
                stack = stacks.setdefault(thread, [])
                (stack[-1].children if stack else roots.setdefault(thread, [])).append(opened)
                stack.append(opened)
            elif kind == "pop":
                test.assertTrue(stacks.get(thread), f"{path}: a range closed that was never opened")
                stacks[thread].pop().closed = True
    still_open = [r.name for stack in stacks.values() for r in stack]
    return categories, roots, still_open


def environment(record_dir):
    return dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                OMPI_MCA_mpi_yield_when_idle="1", NVTX_INJECTION64_PATH=RECORDER,
                COMMBENCH_NVTX_RECORD=record_dir)


def mpirun(np, program, *args, env):
    cmd = [MPIEXEC, "-q", "--oversubscribe", "-np", str(np), program, *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)


class TempDirTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="commbench-profiling-")
        self.record_dir = os.path.join(self.tmp.name, "nvtx")
        os.mkdir(self.record_dir)

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def recorded(self, processes):
        logs = sorted(glob.glob(os.path.join(self.record_dir, "nvtx-*.log")))
        self.assertEqual(len(logs), processes, "one record per rank: the tool was loaded by each")
        return [read_ranges(log, self) for log in logs]


@unittest.skipUnless(RECORDER, "built without the NVTX header (COMMBENCH_WITH_NVTX): no ranges to record")
class Ranges(TempDirTest):
    def test_every_row_has_its_range_with_its_phases_nested_and_balanced(self):
        csv_path = self.path("rows.csv")
        p = mpirun(2, COLLECTIVES, "--backend", "mpi", "--op", "allreduce,allgather,broadcast", "-b", "8", "-e", "4K",
                   "-f", "8", "-n", "3", "-c", "--csv", csv_path, env=environment(self.record_dir))
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(csv_path, newline="") as f:
            rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
        self.assertEqual(len(rows), 12)
        for categories, roots, still_open in self.recorded(2):
            self.assertEqual(categories[1], "bench-collectives")
            self.assertEqual(still_open, [])
            self.assertEqual(len(roots), 1, "every range on the thread that measures")
            cases = next(iter(roots.values()))
            self.assertEqual([case.name for case in cases], [case_name(row) for row in rows])
            for case in cases:
                self.assertEqual(case.category, 1)
                # warm-up and calibration say how many iterations they ran: "warm-up (1 iteration)"
                self.assertEqual([child.name.split(" (")[0] for child in case.children], CASE_PHASES, case.name)
                timed = case.children[CASE_PHASES.index("timed batches")]
                self.assertGreaterEqual(len(timed.children), 1)
                iterations = 0
                for batch in timed.children:
                    self.assertRegex(batch.name, r"^timed batch \(\d+ iterations?\)$")
                    iterations += int(batch.name.split("(")[1].split()[0])
                self.assertEqual(iterations, 3, case.name)  # -n 3: the row's iterations, batch by batch

    def test_an_interrupted_run_closes_every_range_it_opened(self):
        csv_path = self.path("rows.csv")
        cmd = [MPIEXEC, "-q", "--oversubscribe", "-np", "2", COLLECTIVES, "--backend", "mpi", "--op", "allreduce",
               "-b", "8", "-e", "256M", "--csv", csv_path, "--format", "csv"]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=environment(self.record_dir))
        deadline = time.time() + 60
        while time.time() < deadline and not (os.path.exists(csv_path) and open(csv_path).read().count("\n") >= 5):
            time.sleep(0.1)
        ranks = children_of(proc.pid)
        self.assertEqual(len(ranks), 2)
        for pid in ranks:  # as Ctrl-C reaches every process of a job
            os.kill(pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        deadline = time.time() + 10
        while any(alive(pid) for pid in ranks) and time.time() < deadline:
            time.sleep(0.1)
        self.assertEqual(proc.returncode, 128 + signal.SIGINT, out + err)
        self.assertIn("interrupted by SIGINT", err)
        for _, roots, still_open in self.recorded(2):
            self.assertEqual(still_open, [], "the ranges open when the signal came were closed on the way out")
            cases = next(iter(roots.values()))
            self.assertGreaterEqual(len(cases), 4)
            self.assertTrue(all(case.closed for case in cases))

    def test_pattern_steps_carry_their_command_and_hold_their_items(self):
        p = mpirun(2, PATTERNS, "--backend", "mpi", "--pattern", "ddp", "--params", "2M", "--layers", "2",
                   "--hidden", "128", "--ffn", "512", "--seq", "64", "--compute-ms", "0.2", "-n", "2",
                   env=environment(self.record_dir))
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        for categories, roots, still_open in self.recorded(2):
            self.assertEqual(categories[2], "bench-patterns")
            self.assertEqual(still_open, [])
            steps = [r for top in roots.values() for case in top for r in walk(case) if r.name.startswith("step ")]
            self.assertGreaterEqual(len(steps), 3)  # warm-up, calibration, timed
            for step in steps:
                self.assertEqual(step.category, 2)
                names = [item.name for item in step.children]
                self.assertTrue(any(": allreduce " in name and name.endswith(" on data") for name in names), names)
                self.assertTrue(any(name.startswith("forward ") and ": compute " in name for name in names), names)

    def test_validation_phases_carry_their_command(self):
        p = mpirun(2, VALIDATE, "--backend", "mpi", "-b", "64K", "--collective-bytes", "64K", "-n", "2",
                   env=environment(self.record_dir))
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        for categories, roots, still_open in self.recorded(2):
            self.assertEqual(still_open, [])
            top = [r for ranges in roots.values() for r in ranges]
            self.assertEqual([r.name for r in top][:2], ["local checks", "intra-node collectives"])
            self.assertTrue(all(r.category == 4 for r in top))
            # The intra-node collective is one measured case inside its phase.
            self.assertEqual([c.children[0].name for c in top[1].children], ["prepare"])

    def test_p2p_rounds_carry_their_command(self):
        p = mpirun(2, P2P, "--backend", "mpi", "-b", "64K", "-n", "2", "--latency-iters", "5",
                   env=environment(self.record_dir))
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        for categories, roots, still_open in self.recorded(2):
            self.assertEqual(categories[3], "bench-p2p")
            self.assertEqual(still_open, [])
            rounds = [r for ranges in roots.values() for r in ranges]
            self.assertTrue(rounds)
            for measured in rounds:
                self.assertEqual(measured.category, 3)
                self.assertTrue(measured.name.startswith("round "), measured.name)


def walk(range_):
    yield range_
    for child in range_.children:
        yield from walk(child)


class ProfileRange(TempDirTest):
    def run_collectives(self, *args):
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        return mpirun(2, COLLECTIVES, "--backend", "mpi", "--op", "allreduce", "-b", "8", "-e", "64", "-f", "8",
                      "-n", "3", *args, env=env)

    def test_without_a_gpu_the_capture_range_is_skipped_with_a_note(self):
        for args in (["--profile-range"], ["--profile-range", "allreduce 64B"], ["--profile-range", "-w", "2"]):
            p = self.run_collectives(*args)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            self.assertIn("# note: --profile-range: the mpi backend drives no GPU, so there is no CUDA context to "
                          "capture: no capture range is opened", p.stdout)
            self.assertEqual(p.stdout.count("allreduce   out"), 2, p.stdout)

    def test_a_text_in_no_case_name_is_a_usage_error_before_any_file(self):
        csv_path = self.path("rows.csv")
        p = self.run_collectives("--profile-range", "alltoall 1GiB", "--csv", csv_path)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertEqual(p.stderr.strip().splitlines(),
                         ["bench-collectives: error: --profile-range: 'alltoall 1GiB' is in no case's name (they "
                          "read like 'allreduce 8B float sum out-of-place')"])
        self.assertFalse(os.path.exists(csv_path))


if __name__ == "__main__":
    unittest.main()
