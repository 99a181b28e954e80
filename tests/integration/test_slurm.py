"""The suite under a real Slurm: scripts/slurm-cluster.sh brings up slurmctld, munged and
four slurmd "nodes", each in its own network, UTS and mount namespace, and the tests run
the programs and the job files of slurm/ there with srun and sbatch, as users do.

The classes skip, saying why, where this machine cannot host the cluster (exit 3 of the
script: not root, no namespaces, Slurm not installed). They share one cluster name space,
so ctest runs them one at a time (RESOURCE_LOCK slurm_cluster)."""
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
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
CLUSTER = os.path.join(ROOT, "scripts", "slurm-cluster.sh")
BIN = os.environ.get("COMMBENCH_BENCH_DIR", os.path.join(ROOT, "build", "bench"))
# Every node gets a private /tmp: the tests' files live where all nodes see them.
WORK = os.environ.get("COMMBENCH_SLURM_WORK", os.path.join(ROOT, "build"))
STATE = os.environ.get("COMMBENCH_SLURM_DIR", "/var/lib/commbench-slurm")
NODES = ["cb-node1", "cb-node2", "cb-node3", "cb-node4"]


def environment(**extra):
    # `slurm-cluster.sh run` sets how Open MPI's ranks share the cores and which transport
    # they use (why: in the script); the tests' own shell does not get a say.
    env = {name: value for name, value in os.environ.items() if not name.startswith(("SLURM_", "OMPI_MCA_"))}
    env.update(COMMBENCH_BIN=BIN, PYTHONDONTWRITEBYTECODE="1")
    env.update(extra)
    return env


def cluster(*args, timeout=300, env=None, cwd=None):
    return subprocess.run([CLUSTER, *map(str, args)], capture_output=True, text=True, timeout=timeout,
                          env=env or environment(), cwd=cwd or ROOT)


def bring_up():
    """Starts the cluster, or raises SkipTest with the script's reason (exit 3)."""
    p = cluster("up", timeout=180)
    if p.returncode == 3:
        raise unittest.SkipTest(p.stderr.strip().splitlines()[-1])
    if p.returncode != 0:
        raise AssertionError("slurm-cluster.sh up failed (%d):\n%s" % (p.returncode, p.stderr))


def csv_rows(path):
    """Rows of a commbench CSV: the '# slurm: ...' comment line first, then the header."""
    with open(path, newline="") as f:
        lines = f.read().splitlines()
    comments = [line for line in lines if line.startswith("#")]
    return comments, list(csv.DictReader(line for line in lines if not line.startswith("#")))


def namespaces_made_here():
    return sorted(name for name in os.listdir("/run/netns") if name.startswith("cbs-")) \
        if os.path.isdir("/run/netns") else []


def processes_of_the_cluster():
    """Processes that name the cluster's state directory, and every slurm/munge daemon."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
            with open("/proc/%s/comm" % pid) as f:
                comm = f.read().strip()
        except OSError:
            continue
        if STATE in cmdline or comm in ("slurmctld", "slurmd", "slurmstepd", "munged"):
            found.append("%s %s" % (pid, cmdline.strip()))
    return found


def processes_in_other_network_namespaces():
    mine = os.readlink("/proc/self/ns/net")
    pids = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink("/proc/%s/ns/net" % pid) != mine:
                pids.add(pid)
        except OSError:
            continue
    return pids


def host_links():
    out = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True, check=True).stdout
    return sorted(line.split(":")[1].strip().split("@")[0] for line in out.splitlines())


class ClusterLifecycle(unittest.TestCase):
    """up twice, down twice, and up after a killed up leave nothing behind."""

    def assert_clean(self, links_before, foreign_before):
        self.assertEqual(namespaces_made_here(), [])
        self.assertEqual(processes_of_the_cluster(), [])
        self.assertEqual(host_links(), links_before)  # no bridge or veth on the host
        self.assertLessEqual(processes_in_other_network_namespaces(), foreign_before)
        self.assertFalse(os.path.exists(STATE))

    def test_up_twice_down_twice_and_up_after_a_killed_up(self):
        links_before, foreign_before = host_links(), processes_in_other_network_namespaces()
        bring_up()
        try:
            status = cluster("status")
            self.assertEqual(status.returncode, 0, status.stderr)
            self.assertEqual(len(re.findall(r"^cb-node\d\s+1\s+debug\*\s+idle", status.stdout, re.M)), 4, status.stdout)
            again = cluster("up", timeout=180)  # a second up replaces the first
            self.assertEqual(again.returncode, 0, again.stderr)
            self.assertIn("taking it down first", again.stderr)
            self.assertEqual(len(namespaces_made_here()), 6)  # fabric, controller, 4 nodes
        finally:
            down = cluster("down")
        self.assertEqual(down.returncode, 0, down.stderr)
        self.assert_clean(links_before, foreign_before)
        down = cluster("down")
        self.assertEqual(down.returncode, 0, down.stderr)
        self.assert_clean(links_before, foreign_before)
        self.assertEqual(cluster("status").returncode, 1)

        # Killed while it makes the nodes: the next up must start from a clean slate.
        killed = subprocess.Popen([CLUSTER, "up"], env=environment(), stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 60
        while "cbs-node2" not in namespaces_made_here() and time.monotonic() < deadline and killed.poll() is None:
            time.sleep(0.05)
        os.killpg(killed.pid, signal.SIGKILL)
        killed.wait()
        self.assertNotEqual(namespaces_made_here(), [])  # it did leave something
        bring_up()
        try:
            p = cluster("run", "srun", "-N", "4", "hostname")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(sorted(p.stdout.split()), NODES)
        finally:
            down = cluster("down")
        self.assertEqual(down.returncode, 0, down.stderr)
        self.assert_clean(links_before, foreign_before)

    def test_bad_use_is_one_line_and_exit_2(self):
        for args, message in [(["frobnicate"], "usage:"), (["run"], "run: which command?"),
                              (["degrade", "cb-node1"], "degrade NODE RATE")]:
            with self.subTest(args=args):
                p = cluster(*args)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
                self.assertIn(message, p.stderr)
        p = cluster("up", env=environment(COMMBENCH_SLURM_NODES="many"))
        self.assertIn(p.returncode, (2, 3), p.stderr)  # 3 where the machine cannot host it at all
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)


class ClusterTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        bring_up()

    @classmethod
    def tearDownClass(cls):
        p = cluster("down")
        if p.returncode != 0:
            raise AssertionError("slurm-cluster.sh down failed:\n" + p.stderr)

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="commbench-slurm-", dir=WORK)

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def run_on_cluster(self, *args, timeout=300, **extra_env):
        try:
            return cluster("run", *args, timeout=timeout, env=environment(**extra_env), cwd=self.dir)
        except subprocess.TimeoutExpired as expired:
            # Say where it stood: what the command printed so far and what Slurm shows.
            state = cluster("run", "squeue", "-a", timeout=30).stdout + cluster("status", timeout=30).stdout
            printed = expired.stderr or b""  # bytes even under text=True
            printed = printed.decode(errors="replace") if isinstance(printed, bytes) else printed
            raise AssertionError("%s: no end after %d s\nstderr so far:\n%s\nslurm:\n%s" % (
                " ".join(map(str, args[:6])), timeout, printed, state)) from None

    def job_id_of(self, name):
        p = self.run_on_cluster("scontrol", "-o", "show", "job")
        self.assertEqual(p.returncode, 0, p.stderr)
        ids = [m.group(1) for line in p.stdout.splitlines() if "JobName=%s " % name in line
               for m in [re.search(r"JobId=(\d+)", line)]]
        self.assertEqual(len(ids), 1, p.stdout)
        return ids[0]


class SrunAndSbatch(ClusterTest):
    def test_job_steps_get_the_clusters_mpi_settings_unless_the_caller_gives_their_own(self):
        def step_env(**caller):
            p = self.run_on_cluster("srun", "-N", "1", "printenv", "OMPI_MCA_pml", "OMPI_MCA_mpi_yield_when_idle",
                                    **caller)
            self.assertEqual(p.returncode, 0, p.stderr)
            return p.stdout.split()
        self.assertEqual(step_env(), ["ucx", "1"])
        self.assertEqual(step_env(OMPI_MCA_pml="ob1", OMPI_MCA_mpi_yield_when_idle="0"), ["ob1", "0"])

    def test_srun_across_four_nodes_checks_clean_and_names_hosts_job_and_step(self):
        name = "srun-" + uuid.uuid4().hex[:8]
        csv_path, json_path = self.path("c.csv"), self.path("c.json")
        p = self.run_on_cluster("srun", "--mpi=pmix", "-N", "4", "--job-name", name,
                                os.path.join(BIN, "bench-collectives"), "--backend", "mpi", "--check",
                                "-b", "8", "-e", "1M", "-f", "8", "-n", "5", "-T", "120", "--csv", csv_path, "--json",
                                json_path)
        self.assertEqual(p.returncode, 0, p.stderr)
        job_id = self.job_id_of(name)
        with open(json_path) as f:
            doc = json.load(f)
        provenance = doc["provenance"]
        self.assertEqual(provenance["rank_hosts"], NODES)
        self.assertEqual(provenance["nodes"], 4)
        self.assertEqual(provenance["slurm"], {"cluster": "commbench", "job_id": job_id, "job_name": name,
                                               "partition": "debug", "step_id": "0", "nodelist": "cb-node[1-4]",
                                               "nodes": "4", "tasks": "4", "tasks_per_node": "1(x4)"})
        self.assertEqual(doc["summary"]["wrong_elements"], 0)
        comments, rows = csv_rows(csv_path)
        self.assertEqual(comments, ["# slurm: cluster=commbench job_id=%s job_name=%s partition=debug step_id=0 "
                                    "nodelist=cb-node[1-4] nodes=4 tasks=4 tasks_per_node=1(x4)" % (job_id, name)])
        self.assertEqual({r["wrong"] for r in rows}, {"0"})
        self.assertEqual({r["nodes"] for r in rows}, {"4"})
        self.assertEqual(sorted(int(r["bytes"]) for r in rows if r["op"] == "allreduce"),
                         [8, 64, 512, 4096, 32768, 262144])
        self.assertEqual(len(rows), 4 * 6)  # the four default collectives at each size
        self.assertIn("# slurm: cluster=commbench job_id=%s " % job_id, p.stdout)

    def test_bench_replay_over_four_nodes_writes_what_one_process_writes(self):
        # The traces divided over four nodes' ranks; the provenance's time, command line,
        # environment and Slurm job aside, the JSON is the one process's.
        traces = os.path.join(ROOT, "tests", "fixtures", "traces", "llama-zero3")
        replay = os.path.join(BIN, "bench-replay")
        alone = subprocess.run([replay, traces, "--json", self.path("one.json")], capture_output=True, text=True)
        self.assertEqual(alone.returncode, 0, alone.stderr)
        p = self.run_on_cluster("srun", "--mpi=pmix", "-N", "4", replay, traces, "--json", self.path("four.json"))
        self.assertEqual(p.returncode, 0, p.stderr)
        documents = []
        for name in ("one.json", "four.json"):
            with open(self.path(name)) as f:
                documents.append(json.load(f))
            for field in ("started_at", "command_line", "environment", "slurm"):
                documents[-1]["provenance"].pop(field)
        self.assertEqual(documents[1], documents[0])
        # Less the lines of how long it took (the reading, the slowest rank's share) and
        # UCX's own warnings ("[time] [host:pid:thread] ..."), which a rank may print.
        printed = [line for line in p.stdout.splitlines() if not re.match(r"\[[0-9.]+\] \[cb-", line)]
        self.assertEqual(printed[:-2], alone.stdout.splitlines()[:-1])
        self.assertRegex(printed[-1],
                         r"^# divided over 4 ranks: the slowest, rank [0-3], read [12] files? of ")

    def test_the_cpu_variant_of_the_collectives_job_file(self):
        # The command docs/slurm.md gives for CPU nodes: the same file, no GPUs, the MPI backend.
        p = self.run_on_cluster("sbatch", "--wait", "--parsable", "--nodes=4", "--ntasks-per-node=1",
                                "--gpus-per-task=0", os.path.join(ROOT, "slurm", "bench-collectives.sbatch"),
                                COMMBENCH_BACKEND="mpi", COMMBENCH_ARGS="-b 1K -e 64K -f 8 -n 5", timeout=600)
        self.assertEqual(p.returncode, 0, p.stderr)
        job_id = p.stdout.strip().splitlines()[0]
        out = self.path("commbench-" + job_id)  # where the script says the files go
        comments, rows = csv_rows(os.path.join(out, "collectives.csv"))
        self.assertRegex(comments[0], r"^# slurm: cluster=commbench job_id=%s job_name=bench-collectives " % job_id)
        self.assertEqual({r["wrong"] for r in rows}, {"0"})
        self.assertEqual(sorted({r["op"] for r in rows}), ["allgather", "allreduce", "broadcast", "reducescatter"])
        with open(os.path.join(out, "collectives.json")) as f:
            self.assertEqual(json.load(f)["provenance"]["rank_hosts"], NODES)
        with open(self.path("bench-collectives-%s.out" % job_id)) as f:
            self.assertIn("results: %s/collectives.csv" % out, f.read())

    def test_the_topology_job_file_probes_every_node_once(self):
        p = self.run_on_cluster("sbatch", "--wait", "--parsable", "--nodes=4",
                                os.path.join(ROOT, "slurm", "bench-topology.sbatch"), timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        job_id = p.stdout.strip().splitlines()[0]
        out = self.path("commbench-" + job_id)
        with open(os.path.join(out, "topology.json")) as f:
            doc = json.load(f)
        self.assertEqual([node["hostname"] for node in doc["nodes"]], NODES)
        self.assertEqual(doc["provenance"]["slurm"]["tasks_per_node"], "1(x4)")
        self.assertEqual(doc["exit_code"], 0)
        comments, _ = csv_rows(os.path.join(out, "topology.csv"))
        self.assertRegex(comments[0], r"^# slurm: .*job_id=%s .*step_id=0 " % job_id)


class Validation(ClusterTest):
    RULES = "allreduce@256K..:busbw>=0.02\n"  # 20 MB/s: every healthy veth does far more
    # The test cluster's links are TCP over veth pairs on two shared cores: a healthy pair
    # reads from half to twice another between runs, while a throttled link moves 1 MB/s,
    # a thousandth. Hence --fraction 0.3 instead of the default 0.75, which is for real
    # fabrics (docs/validate.md).
    VALIDATE_FLAGS = "-b 256K --collective-bytes 256K -n 5 -w 1 --fraction 0.3"
    # The collective over the nodes is held against the pairs' median by default, which
    # holds where a ring's busbw is what a pair carries (real fabrics). Not here: with the
    # nodes' ranks oversubscribing two cores, a healthy 256 KiB allreduce over 4 nodes read
    # 0.37-0.45 of the pairs' median, over 3 nodes 0.16-0.48, so 3 healthy nodes (what is
    # left when a bad link's end is excluded) failed as a `group` about one run in three
    # (docs/validate.md, "What a figure is held against"). The cluster's figure is stated,
    # as a site file does: healthy groups read 0.19-0.9 GB/s, a group across the throttled
    # link about 0.001, and the check is at 0.3 x 0.1 = 0.03 GB/s.
    SITE = "group_busbw_gbps = 0.1\n"

    def validate_flags(self):
        site = self.path("site.txt")
        with open(site, "w") as f:
            f.write(self.SITE)
        return self.VALIDATE_FLAGS + " --expect " + site

    def validate(self, *sbatch_args):
        rules = self.path("rules.txt")
        with open(rules, "w") as f:
            f.write(self.RULES)
        return self.run_on_cluster("sbatch", "--parsable", "--nodes=4", "--ntasks-per-node=1", "--gpus-per-task=0",
                                   *sbatch_args, os.path.join(ROOT, "slurm", "validate.sbatch"),
                                   COMMBENCH_BACKEND="mpi", COMMBENCH_THRESHOLDS=rules,
                                   COMMBENCH_VALIDATE_FLAGS=self.validate_flags(),
                                   COMMBENCH_SIZES="-b 256K -e 1M --op allreduce", timeout=600)

    def bench_validate(self):
        """One srun of bench-validate alone, as the job file runs it."""
        json_path = self.path("v.json")
        p = self.run_on_cluster("srun", "--mpi=pmix", "-N", "4", os.path.join(BIN, "bench-validate"), "--backend",
                                "mpi", *self.validate_flags().split(), "--json", json_path, "--force")
        self.assertTrue(os.path.exists(json_path), "exit %d\n%s%s" % (p.returncode, p.stdout, p.stderr))
        with open(json_path) as f:
            return p, json.load(f)

    def plan_seconds(self, text):
        return float(re.search(r"^plan: 4 nodes, .* ([\d.]+) s$", text, re.M).group(1))

    def state_of(self, job_id):
        p = self.run_on_cluster("scontrol", "-o", "show", "job", job_id)
        self.assertEqual(p.returncode, 0, p.stderr)
        state = re.search(r"JobState=(\S+)", p.stdout).group(1)
        reason = re.search(r"Reason=(\S+)", p.stdout).group(1)
        return state, reason

    def test_a_healthy_cluster_passes_and_the_training_job_runs_after_it(self):
        p = self.validate("--wait")
        job_id = p.stdout.strip().splitlines()[0]
        log_path = self.path("validate-%s.out" % job_id)
        log = "(no job log)"
        if os.path.exists(log_path):
            with open(log_path) as f:
                log = f.read()
        # sbatch --wait prints nothing of the job: its log says which step failed and why.
        self.assertEqual(p.returncode, 0, "%s\n%s" % (p.stderr, log))
        self.assertIn("verdict: validate exit 0, sweep exit 0", log)
        self.assertIn("verdict: healthy (4 nodes)", log)
        self.assertLessEqual(self.plan_seconds(log), 120)
        self.assertFalse(os.path.exists(self.path("validate-" + job_id, "exclude.txt")))
        _, rows = csv_rows(self.path("validate-" + job_id, "collectives.csv"))
        self.assertEqual({r["threshold"] for r in rows}, {"pass"})
        comments, checks = csv_rows(self.path("validate-" + job_id, "validate.csv"))
        self.assertTrue(comments[0].startswith("# slurm: "), comments)
        self.assertEqual(sorted(r["node_a"] for r in checks if r["kind"] == "node"), NODES)
        # 3 rounds of 2 pairs meet every pair; a pair slow once is measured again (a note).
        met = {tuple(sorted((r["node_a"], r["node_b"]))) for r in checks if r["kind"] == "pair"}
        self.assertEqual(met, {(a, b) for a in NODES for b in NODES if a < b})
        self.assertEqual(len([r for r in checks if r["kind"] == "pair" and r["phase"] == "pairs"]), 6)

    def test_repeated_healthy_runs_name_nothing(self):
        # With the job file's run above, 5 healthy runs in all: zero false positives.
        for attempt in range(4):
            p, doc = self.bench_validate()
            self.assertEqual(p.returncode, 0, "run %d:\n%s%s" % (attempt, p.stdout, p.stderr))
            self.assertEqual(doc["faults"], [])
            self.assertEqual(doc["excluded"], [])
            self.assertLessEqual(doc["plan"]["elapsed_s"], 120)
            self.assertAlmostEqual(doc["expected"]["group_busbw_gbps"], 0.3 * 0.1)  # the site file's

    def test_a_throttled_node_fails_validation_and_the_dependent_job_never_starts(self):
        # 40 Mbit/s: a hundredth of a healthy link, and fast enough that the sweep's
        # adaptive cases over it end in seconds.
        degrade = cluster("degrade", "cb-node3", "40mbit")
        self.assertEqual(degrade.returncode, 0, degrade.stderr)
        try:
            validate = self.validate()
            self.assertEqual(validate.returncode, 0, validate.stderr)
            validate_id = validate.stdout.strip().splitlines()[0]
            # The chain docs/slurm.md gives: training runs only if validation succeeded.
            train = self.run_on_cluster("sbatch", "--parsable", "--dependency=afterok:" + validate_id,
                                        "--wrap", "touch trained")
            self.assertEqual(train.returncode, 0, train.stderr)
            train_id = train.stdout.strip().splitlines()[0]
            deadline = time.monotonic() + 300
            while self.state_of(validate_id)[0] in ("PENDING", "RUNNING") and time.monotonic() < deadline:
                time.sleep(1)
            self.assertEqual(self.state_of(validate_id)[0], "FAILED")
            # The controller marks the dependency at its next scheduling pass.
            while self.state_of(train_id)[1] == "Dependency" and time.monotonic() < deadline:
                time.sleep(1)
            self.assertEqual(self.state_of(train_id), ("PENDING", "DependencyNeverSatisfied"))
            self.assertFalse(os.path.exists(self.path("trained")))
            self.run_on_cluster("scancel", train_id)
        finally:
            restored = cluster("degrade", "cb-node3", "off")
        self.assertEqual(restored.returncode, 0, restored.stderr)
        with open(self.path("validate-%s.out" % validate_id)) as f:
            log = f.read()
        self.assertIn("verdict: validate exit 1, sweep exit 1", log)
        fails = [line for line in log.splitlines() if line.startswith("FAIL ")]
        self.assertEqual(len(fails), 1, log)
        self.assertTrue(fails[0].startswith("FAIL node cb-node3: slow with 3 of 3 partners"), fails[0])
        # Most compared rounds, not all: at 40 Mbit/s some rounds read the slow port within
        # the fraction, and the node verdict above does not depend on them.
        short = re.search(r"; NIC: cb-node3 eth0 fell short in (\d+) of (\d+) compared rounds \(busiest ", fails[0])
        self.assertTrue(short, fails[0])
        self.assertGreater(2 * int(short.group(1)), int(short.group(2)), fails[0])
        self.assertIn("exclude: --exclude=cb-node3\n", log)
        with open(self.path("validate-" + validate_id, "exclude.txt")) as f:
            self.assertEqual(f.read(), "--exclude=cb-node3\n")
        self.assertLessEqual(self.plan_seconds(log), 120)
        self.assertRegex(log, r"threshold failed: .*allreduce@256K\.\.:busbw>=0\.02")
        _, rows = csv_rows(self.path("validate-" + validate_id, "collectives.csv"))
        # 40 Mbit/s is 5 MB/s on one link of the ring: every size falls below 20 MB/s.
        self.assertEqual({r["threshold"] for r in rows}, {"fail"})

    def test_a_degraded_pair_is_reported_as_a_link_not_as_two_nodes(self):
        degrade = cluster("degrade-link", "cb-node1", "cb-node4", "8mbit")
        if degrade.returncode == 3:  # this kernel cannot shape one pair (no htb or u32)
            cluster("degrade-link", "cb-node1", "cb-node4", "off")
            self.skipTest(degrade.stderr.strip().splitlines()[-1])
        self.assertEqual(degrade.returncode, 0, degrade.stderr)
        try:
            p, doc = self.bench_validate()
        finally:
            restored = cluster("degrade-link", "cb-node1", "cb-node4", "off")
        self.assertEqual(restored.returncode, 0, restored.stderr)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertEqual([(f["kind"], f["hosts"]) for f in doc["faults"]], [("link", ["cb-node1", "cb-node4"])])
        self.assertIn("FAIL link cb-node1 - cb-node4: ", p.stdout)
        self.assertNotIn("FAIL node", p.stdout)
        self.assertEqual(len(doc["excluded"]), 1)  # one end leaves the job: the link with it
        self.assertIn(doc["excluded"][0], ("cb-node1", "cb-node4"))
        self.assertIn("--exclude=%s\n" % doc["excluded"][0], p.stdout)
        # The collective then runs over the nodes left, and they pass it.
        remaining = "cb-node[2-4]" if doc["excluded"][0] == "cb-node1" else "cb-node[1-3]"
        self.assertEqual([(g["hosts"], g["phase"], g["short"]) for g in doc["groups"]], [(remaining, "all nodes", False)])

    def test_the_health_check_drains_a_node_that_lacks_its_gpus(self):
        check = os.path.join(ROOT, "slurm", "healthcheck.sh")
        p = cluster("exec", "cb-node2", check, env=environment(COMMBENCH_EXPECTED_GPUS="0"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("commbench healthcheck cb-node2: ok", p.stdout)
        p = cluster("exec", "cb-node2", check, env=environment(COMMBENCH_EXPECTED_GPUS="8"))
        self.assertEqual(p.returncode, 1)
        self.assertIn("0 GPUs visible, expected 8", p.stderr)
        try:
            info = self.run_on_cluster("sinfo", "-h", "-n", "cb-node2", "-o", "%T|%E")
            self.assertEqual(info.stdout.strip(), "drained|commbench: 0 GPUs visible, expected 8")
        finally:
            resume = self.run_on_cluster("scontrol", "update", "NodeName=cb-node2", "State=RESUME")
        self.assertEqual(resume.returncode, 0, resume.stderr)
        # In a job step it reports and fails without draining: Slurm's prolog handling drains.
        p = self.run_on_cluster("srun", "-w", "cb-node2", "-N", "1", check, COMMBENCH_EXPECTED_GPUS="8")
        self.assertNotEqual(p.returncode, 0)
        info = self.run_on_cluster("sinfo", "-h", "-n", "cb-node2", "-o", "%T")
        self.assertEqual(info.stdout.strip(), "idle")


if __name__ == "__main__":
    # ctest counts exit 77 as "skipped" (SKIP_RETURN_CODE): a class that could not bring
    # the cluster up says so there, not as a pass.
    program = unittest.main(exit=False, verbosity=2)
    result = program.result
    if not result.wasSuccessful():
        raise SystemExit(1)
    raise SystemExit(77 if result.skipped and result.testsRun <= len(result.skipped) else 0)
