"""bench-validate as a user runs it: the simulated plan at 4 to 4096 nodes names every
degraded node and link of a sample exactly, in rounds that do not grow with the node
count, with the exclude list Slurm takes; a real job on MPI ranks; bad input is one line
and exit 2. (The real multi-node plan runs on the Slurm test cluster: test_slurm.Validation.)"""
import csv
import json
import os
import random
import re
import shutil
import subprocess
import tempfile
import unittest

BIN = os.environ.get("COMMBENCH_BENCH_VALIDATE", "build/bench/bench-validate")
MPIEXEC = os.environ.get("COMMBENCH_MPIEXEC", "mpirun")


def environment():
    env = {name: value for name, value in os.environ.items() if not name.startswith("SLURM_")}
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_mpi_yield_when_idle="1")
    return env


def run(*args, timeout=240):
    p = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, timeout=timeout, env=environment())
    return p.returncode, p.stdout, p.stderr


def rounds_of(out):
    m = re.search(r"^plan: \d+ nodes?, (\d+) rounds? \((\d+) first, (\d+) re-test\), (\d+) bisection steps?, ([\d.]+) s$",
                  out, re.M)
    assert m, out
    return int(m.group(1)), int(m.group(4)), float(m.group(5))


def fail_lines(out):
    return [line for line in out.splitlines() if line.startswith("FAIL ")]


class TempDirTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="commbench-validate-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)


class Simulation(TempDirTest):
    def name(self, node, nodes):
        return "node%0*d" % (max(2, len(str(nodes - 1))), node)

    def test_a_healthy_cluster_passes_in_three_rounds_at_every_size(self):
        for nodes in (4, 64, 1024, 4096):
            rc, out, err = run("--simulate", nodes)
            self.assertEqual(rc, 0, out + err)
            self.assertEqual(rounds_of(out)[:2], (3, 0), out)
            self.assertIn("verdict: healthy (%d nodes)" % nodes, out)
            self.assertEqual(fail_lines(out), [])
            self.assertNotIn("--exclude", out)

    def test_every_sampled_node_and_link_is_named_exactly(self):
        rng = random.Random(7)
        most_rounds = {}
        for nodes in (4, 64, 1024, 4096):
            cases = [("node:%d" % k, ("node", [k])) for k in rng.sample(range(nodes), 3)]
            for _ in range(3):
                a, b = rng.sample(range(nodes), 2)
                cases.append(("link:%d-%d" % (a, b), ("link", sorted([a, b]))))
            for seed, (spec, (kind, members)) in enumerate(cases):
                rc, out, err = run("--simulate", nodes, "--degrade", spec, "--seed", seed + 1)
                self.assertEqual(rc, 1, out + err)
                names = [self.name(m, nodes) for m in members]
                fails = fail_lines(out)
                self.assertEqual(len(fails), 1, "%s on %d nodes:\n%s" % (spec, nodes, out))
                if kind == "node":
                    self.assertTrue(fails[0].startswith("FAIL node %s: " % names[0]), fails[0])
                    self.assertIn("--exclude=%s\n" % names[0], out)
                else:
                    self.assertTrue(fails[0].startswith("FAIL link %s - %s: " % tuple(names)), fails[0])
                    excluded = re.search(r"^--exclude=(\S+)$", out, re.M).group(1)
                    self.assertIn(excluded, names)  # one end leaves the job, not both
                rounds, steps, _ = rounds_of(out)
                most_rounds[nodes] = max(most_rounds.get(nodes, 0), rounds)
        # 3 first rounds and at most 2 re-test rounds, whatever the node count; at 4 nodes no
        # fresh partner is left, and a suspect's 3 pairs are measured again, one per round.
        self.assertTrue(all(rounds <= (6 if nodes == 4 else 5) for nodes, rounds in most_rounds.items()), most_rounds)
        self.assertEqual(most_rounds[64], most_rounds[4096], most_rounds)

    def test_several_faults_at_once_and_the_files(self):
        csv_path, json_path = self.path("v.csv"), self.path("v.json")
        rc, out, err = run("--simulate", 256, "--degrade", "node:3,node:200,link:17-90@0.4", "--csv", csv_path,
                           "--json", json_path)
        self.assertEqual(rc, 1, out + err)
        self.assertEqual(len(fail_lines(out)), 3, out)
        with open(json_path) as f:
            doc = json.load(f)
        self.assertEqual(doc["schema"], "commbench.validate/1")
        self.assertEqual(doc["simulation"]["nodes"], 256)
        self.assertEqual(sorted((f["kind"], tuple(f["hosts"])) for f in doc["faults"]),
                         [("link", ("node017", "node090")), ("node", ("node003",)), ("node", ("node200",))])
        self.assertEqual(doc["exit_code"], 1)
        self.assertEqual(doc["exclude_option"], re.search(r"^(--exclude=\S+)$", out, re.M).group(1))
        self.assertEqual(len(doc["nodes"]), 256)
        with open(csv_path, newline="") as f:
            lines = f.read().splitlines()
        self.assertTrue(lines[0].startswith("# simulated"))
        rows = list(csv.DictReader(lines[1:]))
        verdicts = {r["node_a"]: r["result"] for r in rows if r["kind"] == "node"}
        self.assertEqual(sorted(n for n, v in verdicts.items() if v == "fail"),
                         ["node003", "node017", "node090", "node200"])
        pairs = [r for r in rows if r["kind"] == "pair"]
        self.assertGreaterEqual(len(pairs), 3 * 128)
        self.assertTrue(all(float(r["measured_gbps"]) > 0 for r in pairs))

    def test_the_time_limit_reports_what_it_knows(self):
        rc, out, err = run("--simulate", 64, "--time-limit", "5.5")
        self.assertEqual(rc, 4, out + err)
        self.assertIn("INCOMPLETE: the time limit was reached before pair round", out)

    def test_more_rounds_and_no_collectives(self):
        json_path = self.path("v.json")
        rc, out, err = run("--simulate", 64, "--rounds", 5, "--no-collectives", "--json", json_path)
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(rounds_of(out)[0], 5)
        with open(json_path) as f:
            doc = json.load(f)
        self.assertEqual(doc["groups"], [])  # no collective over the nodes, no bisection
        partners = {}
        for pair in doc["pairs"]:
            partners.setdefault(pair["a"], set()).add(pair["b"])
            partners.setdefault(pair["b"], set()).add(pair["a"])
        self.assertEqual({len(met) for met in partners.values()}, {5})
        # Without the collective a link the pairs did not meet goes unseen; with it, it is found.
        rc, out, _ = run("--simulate", 1024, "--degrade", "link:3-900", "--no-collectives")
        self.assertEqual(rc, 0, out)
        rc, out, _ = run("--simulate", 1024, "--degrade", "link:3-900")
        self.assertEqual(rc, 1, out)
        self.assertIn("FAIL link node0003 - node0900: ", out)

    def test_estimated_time_at_scale_stays_in_minutes(self):
        for nodes in (64, 256, 1024):
            rc, out, _ = run("--simulate", nodes)
            self.assertEqual(rc, 0)
            self.assertLess(rounds_of(out)[2], 120, out)


class RealJob(TempDirTest):
    def test_one_node_of_four_ranks(self):
        json_path = self.path("r.json")
        cmd = [MPIEXEC, "-q", "--oversubscribe", "-np", "4", BIN, "--backend", "mpi", "-b", "256K",
               "--collective-bytes", "256K", "-n", "3", "--check", "--json", json_path]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=environment())
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("4 ranks on 1 node, backend mpi", p.stdout)
        self.assertIn("note: a single node: no pairs between nodes to measure", p.stdout)
        self.assertIn("verdict: healthy (1 node)", p.stdout)
        with open(json_path) as f:
            doc = json.load(f)
        self.assertEqual(doc["schema"], "commbench.validate/1")
        self.assertIn("provenance", doc)
        self.assertGreater(doc["nodes"][0]["intra_busbw_gbps"], 0)
        self.assertEqual(doc["faults"], [])


    def test_one_rank_without_a_launcher(self):
        p = subprocess.run([BIN, "--backend", "mpi"], capture_output=True, text=True, timeout=120, env=environment())
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn(", 1 rank on 1 node, backend mpi", p.stdout.splitlines()[0])
        self.assertIn("verdict: healthy (1 node)", p.stdout)

    def test_a_site_file_fact_the_node_lacks_fails_it(self):
        site = self.path("site.txt")
        with open(site, "w") as f:
            f.write("GPU count = 8   # this test machine has none\n")
        cmd = [MPIEXEC, "-q", "--oversubscribe", "-np", "2", BIN, "--backend", "mpi", "-b", "64K",
               "--collective-bytes", "64K", "-n", "2", "--expect", site]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=environment())
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        host = re.search(r"^  (\S+) +local check: ", p.stdout, re.M)
        self.assertIsNotNone(host, p.stdout)
        self.assertIn("FAIL node %s: local check: GPU count is 0, expected 8" % host.group(1), p.stdout)
        self.assertIn("--exclude=", p.stdout)

    def test_the_site_file_is_read_on_the_reporting_rank_only(self):
        # Rank 0 starts in a folder holding site.txt, rank 1 in one that does not: the
        # file is the reporting node's, as result files are, and reaches rank 1 from it.
        here, elsewhere = self.path("here"), self.path("elsewhere")
        os.makedirs(here)
        os.makedirs(elsewhere)
        with open(os.path.join(here, "site.txt"), "w") as f:
            f.write("GPU count = 8\n")
        args = [BIN, "--backend", "mpi", "-b", "64K", "--collective-bytes", "64K", "-n", "2", "--expect", "site.txt"]
        cmd = [MPIEXEC, "-q", "--oversubscribe", "-np", "1", "-wdir", here, *args, ":",
               "-np", "1", "-wdir", elsewhere, *args]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=environment())
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("local check: GPU count is 0, expected 8", p.stdout)


class BadInput(TempDirTest):
    def one_line_exit_2(self, *args):
        rc, out, err = run(*args)
        self.assertEqual(rc, 2, out + err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertTrue(err.startswith("bench-validate: error: "), err)
        return err.strip()

    def test_each_bad_input_is_one_line(self):
        self.assertIn("--degrade: 'node:64': node numbers run from 0 to 63",
                      self.one_line_exit_2("--simulate", 64, "--degrade", "node:64"))
        self.assertIn("--degrade: applies to --simulate only", self.one_line_exit_2("--degrade", "node:1"))
        self.assertIn("--fraction", self.one_line_exit_2("--simulate", 8, "--fraction", "1.5"))
        self.assertIn("--rounds", self.one_line_exit_2("--simulate", 8, "--rounds", "1"))
        self.assertIn("--simulate: 100000 nodes is more than the 65536 a simulation takes",
                      self.one_line_exit_2("--simulate", 100000))
        self.assertIn("--simulate", self.one_line_exit_2("--simulate", 0))
        self.assertIn("--degrade: empty", self.one_line_exit_2("--simulate", 8, "--degrade", ""))
        # A fault's time window is a soak's: it would never hold otherwise.
        self.assertIn("--degrade: a time window (/FROM-UNTIL) applies to --soak only",
                      self.one_line_exit_2("--simulate", 8, "--degrade", "node:3@0.3/40-60"))
        self.assertIn("--degrade: a window from 40 s starts after the 10 s of --soak",
                      self.one_line_exit_2("--simulate", 8, "--soak", 10, "--degrade", "node:3@0.3/40-60"))
        expect = self.path("site.txt")
        with open(expect, "w") as f:
            f.write("pair_gbps = 45\ngpus 8\n")
        self.assertIn("--expect %s:2: expected KEY = VALUE, got 'gpus 8'" % expect,
                      self.one_line_exit_2("--simulate", 8, "--expect", expect))
        self.assertIn("--expect", self.one_line_exit_2("--simulate", 8, "--expect", self.path("missing.txt")))
        with open(expect, "w") as f:
            f.write("pair_gbs = 400\n")  # a typo, not a fact no node has
        self.assertIn("--expect %s:1: 'pair_gbs' is neither a figure" % expect,
                      self.one_line_exit_2("--simulate", 8, "--expect", expect))

    def test_a_simulation_refuses_a_device_for_its_csv_before_it_runs(self):
        # The simulation writes its CSV whole and renames it into place; a job's CSV streams.
        err = self.one_line_exit_2("--simulate", 8, "--csv", "/dev/null", "--force")
        self.assertIn("--csv /dev/null: not a regular file", err)

    def test_an_existing_result_file_is_kept_without_force(self):
        existing = self.path("v.json")
        with open(existing, "w") as f:
            f.write("keep")
        self.one_line_exit_2("--simulate", 8, "--json", existing)
        with open(existing) as f:
            self.assertEqual(f.read(), "keep")

    def test_an_expected_figure_from_a_site_file(self):
        expect = self.path("site.txt")
        with open(expect, "w") as f:
            f.write("# a cluster of 400G nodes\npair_gbps = 80   # more than the model's 50\n")
        rc, out, err = run("--simulate", 8, "--expect", expect)
        self.assertEqual(rc, 1, out + err)
        self.assertIn("pairs: expected >= 60 GB/s (0.75 x 80 GB/s, from --expect)", out)
        self.assertIn("note: more than half the nodes fail", out)


if __name__ == "__main__":
    unittest.main()
