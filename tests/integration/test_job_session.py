"""The one job runtime as users see it: every command's JSON carries the same
`provenance` object, and the example command (examples/bench_groups.cpp), built only on
the seams, runs under mpirun with its own row fields. Real processes, real mpirun."""
import csv
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

from process_helpers import alive, children_of

COLLECTIVES = os.environ.get("COMMBENCH_BENCH_COLLECTIVES", "build/bench/bench-collectives")
TOPOLOGY = os.environ.get("COMMBENCH_BENCH_TOPOLOGY", "build/bench/bench-topology")
GROUPS = os.environ.get("COMMBENCH_BENCH_GROUPS", "build/examples/bench-groups")
PATTERNS = os.environ.get("COMMBENCH_BENCH_PATTERNS", "build/bench/bench-patterns")
P2P = os.environ.get("COMMBENCH_BENCH_P2P", "build/bench/bench-p2p")
VALIDATE = os.environ.get("COMMBENCH_BENCH_VALIDATE", "build/bench/bench-validate")
MPIEXEC = os.environ.get("COMMBENCH_MPIEXEC", "mpirun")

PROVENANCE_KEYS = ["program", "version", "commit", "command_line", "started_at", "backend", "backend_version",
                   "mpi_version", "ranks", "nodes", "rank_hosts", "devices", "settings", "slurm", "environment",
                   "notes"]


def run(np, binary, *args, extra_env=None):
    # Outside Slurm unless a test says otherwise, even when the tests run inside a job.
    env = {name: value for name, value in os.environ.items() if not name.startswith("SLURM_")}
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", **(extra_env or {}))
    cmd = [MPIEXEC, "-q", "--oversubscribe", "-np", str(np), binary, *map(str, args)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=env)
    return p.returncode, p.stdout, p.stderr


class TempDirTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="commbench-session-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)


class Provenance(TempDirTest):
    def test_every_command_writes_the_same_provenance_keys(self):
        documents = {}
        for name, binary, args in [("collectives", COLLECTIVES, ["--op", "allreduce", "-b", "8", "-e", "8", "-n", "2"]),
                                   ("topology", TOPOLOGY, []),
                                   ("groups", GROUPS, ["-k", "2", "-b", "8", "-n", "2"])]:
            rc, out, err = run(2, binary, *args, "--json", self.path(name + ".json"))
            self.assertEqual(rc, 0, err)
            with open(self.path(name + ".json")) as f:
                documents[name] = json.load(f)
        for name, doc in documents.items():
            provenance = doc["provenance"]
            self.assertEqual(list(provenance.keys()), PROVENANCE_KEYS, name)
            self.assertEqual(provenance["ranks"], 2, name)
            self.assertEqual(len(provenance["rank_hosts"]), 2, name)
            self.assertTrue(provenance["mpi_version"].startswith("Open MPI"), name)
            self.assertIn(os.path.basename(provenance["command_line"].split()[0]),
                          {"bench-collectives", "bench-topology", "bench-groups"}, name)
            self.assertEqual(provenance["program"], "bench-" + name, name)
            self.assertRegex(provenance["started_at"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", name)
        self.assertEqual(documents["collectives"]["provenance"]["backend"], "mpi")
        self.assertEqual(documents["groups"]["provenance"]["backend"], "mpi")
        self.assertIsNone(documents["topology"]["provenance"]["backend"])
        self.assertEqual(documents["topology"]["schema"], "commbench.topology/3")
        self.assertEqual(documents["groups"]["schema"], "commbench.groups/1")
        for name, doc in documents.items():
            self.assertIsNone(doc["provenance"]["slurm"], name)  # not a Slurm job

    def test_garbage_in_the_slurm_variables_is_recorded_as_it_was_and_breaks_nothing(self):
        garbage = {"SLURM_JOB_ID": "12\n,rank 0", "SLURM_STEP_ID": "\x01\\", "SLURM_JOB_NODELIST": "n[1-",
                   "SLURM_TASKS_PER_NODE": "two(x"}
        csv_path, json_path = self.path("g.csv"), self.path("g.json")
        rc, out, err = run(2, COLLECTIVES, "--op", "allreduce", "-b", "8", "-e", "8", "-n", "2", "--csv", csv_path,
                           "--json", json_path, extra_env=garbage)
        self.assertEqual(rc, 0, err)
        with open(json_path) as f:
            slurm = json.load(f)["provenance"]["slurm"]
        self.assertEqual(slurm, {"job_id": "12\n,rank 0", "step_id": "\x01\\", "nodelist": "n[1-",
                                 "tasks_per_node": "two(x"})
        # One comment line, escaped, then the header and the row: the CSV still parses.
        with open(csv_path, newline="") as f:
            lines = f.read().splitlines()
        self.assertEqual(lines[0], "# slurm: job_id=12\\n,rank 0 step_id=\\x01\\\\ nodelist=n[1- tasks_per_node=two(x")
        rows = list(csv.DictReader(lines[1:]))
        self.assertEqual([r["bytes"] for r in rows], ["8"])
        self.assertIn("# slurm: job_id=12\\n,rank 0 ", out)


class ExampleCommand(TempDirTest):
    def test_groups_of_two_and_four_with_their_own_columns(self):
        csv_path, json_path = self.path("groups.csv"), self.path("groups.json")
        rc, out, err = run(4, GROUPS, "-k", "2,4", "-b", "64K", "-n", "5", "--csv", csv_path, "--json", json_path)
        self.assertEqual(rc, 0, err)
        self.assertEqual(err.strip(), "")
        with open(csv_path, newline="") as f:
            reader = csv.DictReader(f)
            self.assertEqual(reader.fieldnames[-3:], ["model_algo", "group_size", "groups"])
            rows = list(reader)
        self.assertEqual([(r["group_size"], r["groups"], r["ranks"]) for r in rows], [("2", "2", "2"), ("4", "1", "4")])
        for r in rows:
            self.assertEqual((r["op"], r["bytes"], r["iterations"], r["stop_reason"]),
                             ("allreduce", "65536", "5", "fixed_count"))
            self.assertGreater(float(r["time_us"]), 0)
        with open(json_path) as f:
            doc = json.load(f)
        self.assertEqual([(r["group_size"], r["groups"]) for r in doc["rows"]], [(2, 2), (4, 1)])
        self.assertTrue(doc["complete"])
        # nccl-tests' "Avg bus bandwidth": the rows' mean, in the JSON and on the console.
        average = sum(r["busbw_gbps"] for r in doc["rows"]) / 2
        self.assertGreater(average, 0)
        self.assertAlmostEqual(doc["summary"]["average_busbw_gbps"], average, places=9)
        self.assertRegex(out, r"# Avg bus bandwidth +: [0-9.e+-]+ GB/s")
        self.assertNotIn("# Avg bus bandwidth    : 0 GB/s", out)
        # The console table has the command's own columns too, so the K=2 and K=4 rows differ
        # there as well; its footer agrees with #wrong's N/A: nothing was checked.
        self.assertRegex(out, r"#wrong +thr group_size groups\n")
        table = [line.split() for line in out.splitlines() if line.strip() and not line.startswith("#")]
        self.assertEqual([(r[0], r[-2], r[-1]) for r in table], [("allreduce", "2", "2"), ("allreduce", "4", "1")])
        self.assertEqual([r[-4] for r in table], ["N/A", "N/A"])
        self.assertIn("# rows: 2  wrong elements: not checked  complete: yes", out)
        self.assertIsNone(doc["summary"]["wrong_elements"])

    def test_a_group_size_that_does_not_divide_the_ranks_is_one_error(self):
        rc, out, err = run(4, GROUPS, "-k", "3", "--json", self.path("never.json"))
        self.assertEqual(rc, 2, err)
        self.assertEqual(err.strip().splitlines(), ["bench-groups: error: -k/--group-size: 3 does not divide the 4 ranks"])
        self.assertFalse(os.path.exists(self.path("never.json")))


# The shared option groups (cli/command_shell.hpp): each flag's spellings, as --help lists them.
SHARED_FLAGS = {"-n": {"-n", "--iters"}, "-w": {"-w", "--warmup", "--warmup-iters"}, "-T": {"-T", "--timeout"},
                "--backend": {"--backend"}, "--csv": {"--csv"}, "--json": {"--json"}, "--force": {"--force"}}
MEASURING = {"-n", "-w", "-T", "--backend", "--csv", "--json", "--force"}


def help_flags(binary):
    """{first name: every name} of each option --help lists (answered before MPI starts)."""
    p = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    flags = {}
    for line in p.stdout.splitlines():
        match = re.match(r"^\s+(-[-\w,]+)", line)
        if match:
            names = match.group(1).rstrip(",").split(",")
            flags[names[0]] = set(names)
    return flags


class SharedFlags(unittest.TestCase):
    """The same flag is spelled the same in every command (old spellings kept beside)."""

    def test_every_command_spells_the_shared_flags_alike(self):
        commands = {COLLECTIVES: MEASURING, PATTERNS: MEASURING, P2P: MEASURING, VALIDATE: MEASURING,
                    GROUPS: MEASURING, TOPOLOGY: {"-T", "--csv", "--json", "--force"}}
        for binary, expected in commands.items():
            with self.subTest(command=os.path.basename(binary)):
                flags = help_flags(binary)
                self.assertLessEqual(expected, set(flags), "shared flags missing")
                for first in expected:
                    self.assertLessEqual(SHARED_FLAGS[first], flags[first], first)


if __name__ == "__main__":
    unittest.main()


class ExampleCommandStopped(TempDirTest):
    """The example has no try/catch: the shell says the signal once and closes its files."""

    def test_sigterm_leaves_complete_false_files_with_the_rows_measured(self):
        csv_path, json_path = self.path("groups.csv"), self.path("groups.json")
        env = {name: value for name, value in os.environ.items() if not name.startswith("SLURM_")}
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        # Far more group sizes than a few seconds measure: 5000 iterations each make the whole
        # run take most of a minute on an idle machine too, not only on a loaded one.
        cmd = [MPIEXEC, "-q", "--oversubscribe", "-np", "4", GROUPS, "-k", ",".join(["2"] * 2000), "-b", "4",
               "-n", "5000", "-w", "0", "-T", "120", "--csv", csv_path, "--json", json_path]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        deadline = time.time() + 60
        while time.time() < deadline and not (os.path.exists(csv_path) and os.path.getsize(csv_path) > 0):
            time.sleep(0.05)
        time.sleep(2)
        ranks = children_of(proc.pid)
        self.assertEqual(len(ranks), 4)
        for pid in ranks:
            os.kill(pid, signal.SIGTERM)
        out, err = proc.communicate(timeout=120)
        for pid in ranks:
            deadline = time.time() + 10
            while alive(pid) and time.time() < deadline:
                time.sleep(0.1)
            self.assertFalse(alive(pid))
        self.assertEqual(proc.returncode, 143, err)
        self.assertEqual(err.count("bench-groups: error: interrupted by SIGTERM"), 1, err)
        with open(json_path) as f:
            doc = json.load(f)
        self.assertFalse(doc["complete"])
        self.assertEqual(doc["exit_code"] if "exit_code" in doc else doc["summary"]["exit_code"], 143)
        with open(csv_path, newline="") as f:
            rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
        self.assertEqual(len(rows), len(doc["rows"]))
        self.assertLess(len(rows), 2000)
        self.assertTrue(all(r["group_size"] == "2" for r in rows))
        self.assertIn("complete: no", out)

