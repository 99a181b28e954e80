"""The one result model as users meet it: every record a command writes validates against
docs/schema/records.schema.json (a real JSON Schema implementation), its CSV header is its
kind's columns, and a run stopped by SIGTERM in the middle of real work on 4 MPI ranks
keeps every record it made, in a CSV and a JSON that parse and say `complete: false`."""
import csv
import errno
import glob
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

import jsonschema

from process_helpers import alive, children_of, run_stalled

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA_PATH = os.path.join(HERE, "..", "..", "docs", "schema", "records.schema.json")
COLLECTIVES = os.environ.get("COMMBENCH_BENCH_COLLECTIVES", "build/bench/bench-collectives")
P2P = os.environ.get("COMMBENCH_BENCH_P2P", "build/bench/bench-p2p")
VALIDATE = os.environ.get("COMMBENCH_BENCH_VALIDATE", "build/bench/bench-validate")
GROUPS = os.environ.get("COMMBENCH_BENCH_GROUPS", "build/examples/bench-groups")
PATTERNS = os.environ.get("COMMBENCH_BENCH_PATTERNS", "build/bench/bench-patterns")
TOPOLOGY = os.environ.get("COMMBENCH_BENCH_TOPOLOGY", "build/bench/bench-topology")
TOPOLOGY_FIXTURES = os.path.join(HERE, "..", "fixtures", "topology")
# bench-topology reads its fixtures' hwloc XML only when built with hwloc.
NEEDS_HWLOC = unittest.skipUnless(os.environ.get("COMMBENCH_HAVE_HWLOC", "1") == "1", "built without hwloc")
MPIEXEC = os.environ.get("COMMBENCH_MPIEXEC", "mpirun")

with open(SCHEMA_PATH, encoding="utf-8") as _f:
    SCHEMA = json.load(_f)


# One validator per kind (jsonschema.validate would check the schema again for every record).
VALIDATORS = {kind: jsonschema.Draft202012Validator({**definition, "$schema": SCHEMA["$schema"]})
              for kind, definition in SCHEMA["$defs"].items()}


def environment():
    env = {name: value for name, value in os.environ.items() if not name.startswith("SLURM_")}
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_mpi_yield_when_idle="1")
    return env


def mpirun(np, binary, *args):
    return [MPIEXEC, "-q", "--oversubscribe", "-np", str(np), binary, *map(str, args)]


def csv_records(path):
    with open(path, newline="") as f:
        lines = [line for line in f if not line.startswith("#")]
    reader = csv.reader(lines)
    header = next(reader)
    return header, [dict(zip(header, row, strict=True)) for row in reader]


def handles_interruptions(pid):
    """Whether the process catches SIGINT and SIGTERM (commbench's handlers are installed)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            caught = int(next(line for line in f if line.startswith("SigCgt:")).split()[1], 16)
    except (OSError, StopIteration):
        return False
    wanted = (1 << (signal.SIGINT - 1)) | (1 << (signal.SIGTERM - 1))
    return caught & wanted == wanted


def write_when_read(fifo, text, timeout_s=60):
    """Writes `text` into the FIFO once a reader has it open (ENXIO until then)."""
    deadline = time.time() + timeout_s
    while True:
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError as e:
            if e.errno != errno.ENXIO or time.time() > deadline:
                raise
            time.sleep(0.05)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


class TempDirTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="commbench-results-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def assert_records_valid(self, doc, kind, header, extra=()):
        columns = list(SCHEMA["$defs"][kind]["properties"])
        self.assertEqual(header, columns + list(extra))
        records = doc[SCHEMA["$defs"][kind]["x-document-key"]]
        self.assertGreater(len(records), 0)
        for record in records:
            VALIDATORS[kind].validate(record)
            self.assertEqual(list(record)[:len(columns)], columns)
        return records

    def assert_pattern_records_valid(self, doc, csv_path):
        """bench-patterns' two kinds: the CSV's header is `record`, the type columns, the
        step columns not named already, then the settings; each line holds its kind's
        values, and the JSON's arrays hold the same records."""
        header, rows = csv_records(csv_path)
        kinds = ("type", "step")
        union = list(dict.fromkeys(c for kind in kinds for c in SCHEMA["$defs"][kind]["properties"]))
        self.assertEqual(header, ["record"] + union + list(doc["pattern"]))
        for kind in kinds:
            records = doc[SCHEMA["$defs"][kind]["x-document-key"]]
            for record in records:
                VALIDATORS[kind].validate(record)
            lines = [r for r in rows if r["record"] == kind]
            self.assertEqual(len(lines), len(records), kind)
            for line, record in zip(lines, records):
                for column, value in record.items():
                    if isinstance(value, float):
                        self.assertAlmostEqual(float(line[column]), value, delta=1e-8 * abs(value), msg=column)
                    elif value is not None and not isinstance(value, bool):
                        self.assertEqual(line[column], str(value), column)
                for setting, value in doc["pattern"].items():
                    self.assertEqual(line[setting], value)
        self.assertEqual({r["record"] for r in rows}, set(kinds))
        return doc["steps"], doc["types"]


class RecordSchema(TempDirTest):
    """One real run of each command; every record it wrote fits its kind."""

    def run_ok(self, cmd):
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=environment())
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(self.path("r.json")) as f:
            return json.load(f), csv_records(self.path("r.csv"))[0]

    def outputs(self):
        return ["--csv", self.path("r.csv"), "--json", self.path("r.json")]

    def test_collectives_rows(self):
        doc, header = self.run_ok(mpirun(2, COLLECTIVES, "--op", "allreduce,broadcast", "-b", "8", "-e", "1K",
                                         "-n", "2", "-w", "1", "--check", "1", *self.outputs()))
        rows = self.assert_records_valid(doc, "row", header)
        self.assertEqual(len(rows), doc["summary"]["rows"])
        self.assertTrue(doc["complete"])

    def test_groups_rows_with_their_own_fields(self):
        doc, header = self.run_ok(mpirun(4, GROUPS, "-k", "2", "-b", "64K", "-n", "2", *self.outputs()))
        self.assert_records_valid(doc, "row", header, extra=("group_size", "groups"))

    def test_p2p_cells(self):
        doc, header = self.run_ok(mpirun(3, P2P, "--backend", "mpi", "-b", "4K", "-n", "2", "--latency-iters", "2",
                                         *self.outputs()))
        cells = self.assert_records_valid(doc, "cell", header)
        self.assertEqual(len(cells), 6)  # every ordered pair of 3 ranks
        self.assertEqual(doc["exit_code"], 0)

    def test_validate_checks(self):
        doc, header = self.run_ok(mpirun(2, VALIDATE, "--backend", "mpi", "-b", "64K", "--collective-bytes", "64K",
                                         "-n", "2", *self.outputs()))
        checks = self.assert_records_valid(doc, "check", header)
        self.assertEqual([c["kind"] for c in checks], ["node", "intra"])
        self.assertGreater(checks[1]["measured_gbps"], 0)

    @NEEDS_HWLOC
    def test_topology_links(self):
        doc, header = self.run_ok([TOPOLOGY, "--hwloc-xml", os.path.join(TOPOLOGY_FIXTURES, "hwloc", "dgx-h100.xml"),
                                   "--sysfs-root", os.path.join(TOPOLOGY_FIXTURES, "sysfs", "dgx-h100"),
                                   *self.outputs()])
        links = self.assert_records_valid(doc, "link", header)
        self.assertEqual(len([k for k in links if k["type"] == "NVLink"]), 32)  # 8 GPUs x 4 NVSwitches
        self.assertTrue(doc["complete"])
        self.assertEqual(doc["exit_code"], 0)


class PatternRecords(TempDirTest):
    """bench-patterns' steps and collective types, measured on MPI ranks and predicted."""

    SMALL_MODEL = ("--params", "5M", "--layers", "4", "--hidden", "256", "--ffn", "1024", "--seq", "128")

    def run_ok(self, cmd):
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=environment())
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(self.path("r.json")) as f:
            return json.load(f)

    def outputs(self):
        return ["--csv", self.path("r.csv"), "--json", self.path("r.json")]

    def test_measured_steps_and_types(self):
        doc = self.run_ok(mpirun(2, PATTERNS, "--backend", "mpi", "--pattern", "fsdp", *self.SMALL_MODEL, "-n", "3",
                                 *self.outputs()))
        steps, types = self.assert_pattern_records_valid(doc, self.path("r.csv"))
        self.assertEqual([s["step"] for s in steps], [0, 1, 2])
        self.assertEqual({t["type"] for t in types}, {"allgather/data", "reducescatter/data"})
        self.assertTrue(doc["complete"])
        self.assertEqual(doc["schema"], "commbench.patterns/2")
        mean = sum(s["step_seconds"] for s in steps) / len(steps)
        self.assertAlmostEqual(doc["mean_step"]["step_seconds"], mean, delta=1e-9 + 1e-9 * mean)

    def test_predicted_step_and_types(self):
        sweep = self.path("sweep.csv")
        p = subprocess.run(mpirun(2, COLLECTIVES, "--backend", "mpi", "--op", "allreduce", "-b", "64K", "-e", "16M",
                                  "-f", "4", "-n", "2", "-w", "1", "--csv", sweep),
                           capture_output=True, text=True, timeout=240, env=environment())
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = self.run_ok([PATTERNS, "--predict", "--from", sweep, "--gpus-per-node", "2", "--pattern", "ddp",
                           *self.SMALL_MODEL, "--compute-ms", "0", *self.outputs()])
        steps, types = self.assert_pattern_records_valid(doc, self.path("r.csv"))
        self.assertEqual(len(steps), 1)
        self.assertTrue(doc["predicted"])
        self.assertEqual(doc["pattern"]["predicted"], "true")
        self.assertIn("--predict", doc["provenance"]["command_line"])
        self.assertEqual(doc["provenance"]["ranks"], 2)
        self.assertTrue(doc["complete"])
        self.assertEqual(doc["exit_code"], 0)
        self.assertEqual([(t["type"], t["group_ranks"]) for t in types], [("allreduce/data", 2)])
        self.assertIn("sweep", doc["types"][0]["basis"] + doc["cost_model"]["basis"])
        # The sweep read is not a result file, even with --force.
        with open(sweep) as f:
            before = f.read()
        p = subprocess.run([PATTERNS, "--predict", "--from", sweep, "--gpus-per-node", "2", "--pattern", "ddp",
                            *self.SMALL_MODEL, "--csv", sweep, "--force"],
                           capture_output=True, text=True, timeout=60, env=environment())
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertEqual(p.stderr.strip(), f"bench-patterns: error: --csv {sweep}: a file this run reads (--from {sweep}); "
                                           "name another result file")
        with open(sweep) as f:
            self.assertEqual(f.read(), before)


class Interruption(TempDirTest):
    """SIGTERM to every rank mid-run, as Slurm sends it at the time limit."""

    def start(self, cmd, ready):
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment())
        deadline = time.time() + 60
        while time.time() < deadline and not ready(proc):
            time.sleep(0.05)
        self.assertTrue(ready(proc), "the run never got going")
        return proc

    def stop(self, proc, after_seconds):
        time.sleep(after_seconds)
        ranks = children_of(proc.pid)
        self.assertEqual(len(ranks), 4)
        for pid in ranks:
            os.kill(pid, signal.SIGTERM)
        out, err = proc.communicate(timeout=120)
        deadline = time.time() + 10
        while any(alive(pid) for pid in ranks) and time.time() < deadline:
            time.sleep(0.1)
        for pid in ranks:
            self.assertFalse(alive(pid), f"rank process {pid} outlived the job by 10 s")
        return proc.returncode, out, err

    def read_both(self, kind):
        header, rows = csv_records(self.path("r.csv"))
        with open(self.path("r.json")) as f:
            doc = json.load(f)
        self.assertEqual(glob.glob(self.path("r.json") + ".tmp*"), [])
        records = self.assert_records_valid(doc, kind, header) if rows else []
        self.assertEqual(len(records), len(rows))
        self.assertFalse(doc["complete"])
        return rows, doc

    def test_p2p_keeps_the_cells_of_every_round_it_finished(self):
        # Rounds of many iterations: far more than a few seconds hold, and few enough to plan
        # at once (a plan of many thousand rounds takes seconds before the first, under ASan).
        rounds = 4000
        cmd = mpirun(4, P2P, "--backend", "mpi", "--schedule", "random", "--rounds", rounds, "-b", "8", "-n", "6000",
                     "-w", "0", "--latency-bytes", "0", "--csv", self.path("r.csv"), "--json", self.path("r.json"))
        proc = self.start(cmd, lambda _: os.path.exists(self.path("r.csv")))
        rc, out, err = self.stop(proc, 4)
        self.assertEqual(rc, 143, err)
        self.assertIn("bench-p2p: error: interrupted by SIGTERM", err)
        rows, doc = self.read_both("cell")
        # Each round is 2 pairs, each measured one way then the other: every round but the
        # last is whole (4 cells), the last has one direction (2) or both.
        self.assertGreater(len(rows), 0)
        self.assertLess(len(rows), rounds * 4)
        per_round = {}
        for r in rows:
            per_round[int(r["round"])] = per_round.get(int(r["round"]), 0) + 1
        last = max(per_round)
        self.assertEqual({n for k, n in per_round.items() if k != last} or {4}, {4}, per_round)
        self.assertIn(per_round[last], (2, 4))
        self.assertEqual(doc["exit_code"], 143)
        self.assertEqual(len(doc["rounds"]), rounds)
        measured_rounds = sorted({int(r["round"]) for r in rows})
        self.assertEqual(measured_rounds, list(range(len(measured_rounds))), "a round was skipped")
        self.assertIn("bandwidth (GB/s)", out)  # the report of what was measured

    def test_validate_keeps_the_checks_made_before_the_signal(self):
        # An intra-node collective far longer than the test: the signal lands in it.
        cmd = mpirun(4, VALIDATE, "--backend", "mpi", "--collective-bytes", "4M", "-n", "1000000",
                     "--csv", self.path("r.csv"), "--json", self.path("r.json"))
        proc = self.start(cmd, lambda _: os.path.exists(self.path("r.csv")))
        rc, out, err = self.stop(proc, 1)
        self.assertEqual(rc, 143, out + err)
        self.assertIn("bench-validate: error: interrupted by SIGTERM", err)
        self.assertIn("INCOMPLETE: interrupted by SIGTERM during the intra-node collectives", out)
        rows, doc = self.read_both("check")
        self.assertEqual([(r["kind"], r["result"]) for r in rows], [("node", "ok")])
        self.assertEqual(doc["interrupted_by"], "SIGTERM")
        self.assertEqual(doc["stopped_before"], "the intra-node collectives")
        self.assertEqual(doc["exit_code"], 143)

    @NEEDS_HWLOC
    def test_topology_keeps_the_models_probed_when_the_signal_came(self):
        # One NIC port's rate is a FIFO: rank 0's probe waits in it until the test writes
        # the rate, after every rank has had its SIGTERM.
        sysfs = self.path("sysfs")
        shutil.copytree(os.path.join(TOPOLOGY_FIXTURES, "sysfs", "dgx-h100"), sysfs, symlinks=True)
        rate = os.path.join(sysfs, "class", "infiniband", "mlx5_0", "ports", "1", "rate")
        with open(rate) as f:
            rate_text = f.read()
        os.remove(rate)
        os.mkfifo(rate)
        cmd = mpirun(4, TOPOLOGY, "--hwloc-xml", os.path.join(TOPOLOGY_FIXTURES, "hwloc", "dgx-h100.xml"),
                     "--sysfs-root", sysfs, "--csv", self.path("r.csv"), "--json", self.path("r.json"))
        proc = self.start(cmd, lambda proc: len(children_of(proc.pid)) == 4 and
                          all(handles_interruptions(pid) for pid in children_of(proc.pid)))
        ranks = children_of(proc.pid)
        for pid in ranks:
            os.kill(pid, signal.SIGTERM)
        write_when_read(rate, rate_text)
        out, err = proc.communicate(timeout=120)
        self.assertEqual(proc.returncode, 143, out + err)
        self.assertIn("bench-topology: error: interrupted by SIGTERM", err)
        rows, doc = self.read_both("link")
        self.assertEqual(len(rows), len(doc["links"]))
        self.assertIn({"host": "dgx-h100.xml", "from": "mlx5_0 port 1", "to": "network", "type": "InfiniBand",
                       "count": "4", "spec_gbps": "50", "state": "ACTIVE"}, rows)
        self.assertEqual(doc["exit_code"], 143)
        self.assertEqual(len(doc["nodes"]), 1)

    def test_patterns_keeps_the_steps_it_timed(self):
        steps = 100000  # far more than the test waits for
        cmd = mpirun(4, PATTERNS, "--backend", "mpi", "--pattern", "ddp", "--params", "5M", "--layers", "4",
                     "--hidden", "256", "--ffn", "1024", "--seq", "128", "-n", steps,
                     "--csv", self.path("r.csv"), "--json", self.path("r.json"))
        # Once every rank handles SIGINT/SIGTERM, a signal stops the steps after the batch
        # under way, the first timed one at the earliest (one during set-up or warm-up waits).
        proc = self.start(cmd, lambda proc: len(children_of(proc.pid)) == 4 and
                          all(handles_interruptions(pid) for pid in children_of(proc.pid)))
        rc, out, err = self.stop(proc, 2)
        self.assertEqual(rc, 143, out + err)
        self.assertIn("bench-patterns: error: interrupted by SIGTERM", err)
        _, rows = csv_records(self.path("r.csv"))
        with open(self.path("r.json")) as f:
            doc = json.load(f)
        self.assert_pattern_records_valid(doc, self.path("r.csv"))
        timed = [r for r in rows if r["record"] == "step"]
        self.assertGreater(len(timed), 0)
        self.assertLess(len(timed), steps)
        self.assertEqual(len(doc["steps"]), len(timed))
        self.assertEqual(doc["steps_measured"], len(timed))
        self.assertFalse(doc["complete"])
        self.assertEqual(doc["exit_code"], 143)
        self.assertIn(f"interrupted by SIGTERM after {len(timed)} of {steps} timed steps", doc["provenance"]["notes"])


    def test_patterns_signalled_in_warm_up_stops_there_with_no_step(self):
        cmd = mpirun(4, PATTERNS, "--backend", "mpi", "--pattern", "ddp", "--params", "5M", "--layers", "4",
                     "--hidden", "256", "--ffn", "1024", "--seq", "128", "-w", 300, "-n", 5,
                     "--csv", self.path("r.csv"), "--json", self.path("r.json"))
        proc = self.start(cmd, lambda proc: len(children_of(proc.pid)) == 4 and
                          all(handles_interruptions(pid) for pid in children_of(proc.pid)) and
                          os.path.exists(self.path("r.csv")))
        # 300 warm-up steps take far longer than this second: the signal lands in them, and
        # the warm-up stops within its next agreement (a tenth of a second of steps), before
        # any timed step, rather than running on to the first one.
        rc, out, err = self.stop(proc, 1)
        self.assertEqual(rc, 143, out + err)
        self.assertIn("bench-patterns: error: interrupted by SIGTERM", err)
        _, rows = csv_records(self.path("r.csv"))
        self.assertEqual([r["step"] for r in rows if r["record"] == "step"], [])
        with open(self.path("r.json")) as f:
            doc = json.load(f)
        self.assertFalse(doc["complete"])
        self.assertEqual((len(doc["steps"]), doc["exit_code"]), (0, 143))


class Timeout(TempDirTest):
    """A rank that stalls mid-sweep: the job ends with exit 4 (the watchdog), and the
    reporting rank closes its files first, holding every record made before the stall."""

    TIMEOUT_S = 5

    def test_collectives_keeps_the_rows_before_a_stalled_case(self):
        cmd = mpirun(4, COLLECTIVES, "--op", "allreduce", "-b", "8", "-e", "4M", "-n", "3", "-T", self.TIMEOUT_S,
                     "--csv", self.path("r.csv"), "--json", self.path("r.json"))
        rc, err, elapsed, ranks = run_stalled(cmd, "allreduce 1MiB", self.TIMEOUT_S)
        self.assertIn("rank 1 stops itself at", err)
        self.assertEqual(rc, 4, err)
        self.assertFalse(any(alive(pid) for pid in ranks), "orphan rank processes")
        header, rows = csv_records(self.path("r.csv"))
        with open(self.path("r.json")) as f:
            doc = json.load(f)
        records = self.assert_records_valid(doc, "row", header)
        self.assertEqual([r["bytes"] for r in records], [8 << k for k in range(17)])  # 8 B to 512 KiB
        self.assertEqual(len(rows), len(records))
        self.assertFalse(doc["complete"])
        self.assertEqual(doc["summary"]["exit_code"], 4)
        self.assertEqual(doc["summary"]["rows"], 17)
        self.assertEqual(glob.glob(self.path("r.json") + ".tmp*"), [])

    def test_p2p_closes_its_files_with_the_timeouts_exit_code(self):
        # Cells are judged at the end: a stalled run's JSON is whole, with none.
        cmd = mpirun(4, P2P, "--backend", "mpi", "-b", "4K", "-n", "2", "--latency-bytes", "0", "-T", self.TIMEOUT_S,
                     "--csv", self.path("r.csv"), "--json", self.path("r.json"))
        rc, err, _, ranks = run_stalled(cmd, "round 2 ", self.TIMEOUT_S)
        self.assertIn("rank 1 stops itself at", err)
        self.assertEqual(rc, 4, err)
        self.assertFalse(any(alive(pid) for pid in ranks), "orphan rank processes")
        with open(self.path("r.json")) as f:
            doc = json.load(f)
        self.assertEqual((doc["complete"], doc["exit_code"], doc["cells"]), (False, 4, []))
        self.assertEqual(csv_records(self.path("r.csv")), (list(SCHEMA["$defs"]["cell"]["properties"]), []))


if __name__ == "__main__":
    unittest.main()
