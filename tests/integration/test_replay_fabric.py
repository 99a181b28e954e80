"""bench-replay's fabric figures: --fabric against a real bench-collectives sweep on 4 MPI
ranks of this machine, and --measure-fabric, the job's own collectives measured on this
job's MPI ranks.
"""
import csv
import json
import os
import shutil
import subprocess
import tempfile
import unittest

from replay_test_support import BIN, COLLECTIVES, HERE, MPIEXEC, TRACES, load, merged, rank_files, run


@unittest.skipUnless(COLLECTIVES and MPIEXEC, "COMMBENCH_BENCH_COLLECTIVES or COMMBENCH_MPIEXEC not set")
class Fabric(unittest.TestCase):
    """--fabric against a real bench-collectives sweep on 4 MPI ranks of this machine."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="commbench-replay-fabric-")
        cls.sweep = os.path.join(cls.dir, "sweep.csv")
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   OMPI_MCA_mpi_yield_when_idle="1")
        p = subprocess.run([MPIEXEC, "-q", "--oversubscribe", "-np", "4", COLLECTIVES, "--backend", "mpi",
                            "--op", "allgather,reducescatter", "-b", "1M", "-e", "8M", "-f", "2", "-n", "3",
                            "-w", "1", "--csv", cls.sweep, "--json", cls.sweep[:-3] + "json"],
                           capture_output=True, text=True, timeout=300, env=env)
        if p.returncode != 0:
            raise AssertionError("bench-collectives failed: " + p.stderr)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def sweep_points(self, op):
        with open(self.sweep, newline="") as f:
            rows = [r for r in csv.DictReader(line for line in f if not line.startswith("#")) if r["op"] == op]
        return sorted((int(r["bytes"]), float(r["time_us"]) * 1e-6) for r in rows)

    def test_each_class_is_held_against_the_sweep_at_its_size(self):
        path = os.path.join(self.dir, "fsdp2.json")
        code, out, err = run(os.path.join(TRACES, "fsdp2"), "--fabric", self.sweep, "--json", path)
        self.assertEqual(code, 0, err)
        with open(path) as f:
            doc = json.load(f)
        job = fabric = 0.0
        for c in doc["collectives"]:
            points = self.sweep_points(c["op"])
            below = [t for b, t in points if b <= c["bytes"]][-1]
            above = [t for b, t in points if b >= c["bytes"]][0]
            # 4 MiB and a few bytes: between the sweep's 4 MiB and 8 MiB times.
            self.assertGreaterEqual(c["fabric_seconds"], min(below, above) * 0.999)
            self.assertLessEqual(c["fabric_seconds"], max(below, above) * 1.001)
            self.assertAlmostEqual(c["fabric_ratio"], c["fabric_seconds"] / c["seconds"], places=9)
            self.assertAlmostEqual(c["fabric_busbw_gbps"], c["busbw_gbps"] / c["fabric_ratio"], places=9)
            job += c["seconds"] * c["calls"]
            fabric += c["fabric_seconds"] * c["calls"]
        self.assertAlmostEqual(doc["fabric"]["job_seconds"], job, places=9)
        self.assertAlmostEqual(doc["fabric"]["fabric_seconds"], fabric, places=9)
        self.assertIn(f"{100 * fabric / job:.3g}% of the fabric's busbw", out)

    def test_the_sweeps_json_file_gives_what_its_csv_gives(self):
        docs = []
        for sweep in (self.sweep, self.sweep[:-3] + "json"):
            path = os.path.join(self.dir, "fsdp2-" + sweep[-4:] + ".json")
            code, out, err = run(os.path.join(TRACES, "fsdp2"), "--fabric", sweep, "--json", path)
            self.assertEqual(code, 0, err)
            with open(path) as f:
                docs.append(json.load(f))
        csv_doc, json_doc = docs
        # The same figures, but for the CSV's rounding of time_us and busbw_gbps.
        pairs = list(zip(json_doc["collectives"], csv_doc["collectives"])) + [(json_doc["fabric"], csv_doc["fabric"])]
        self.assertEqual(len(pairs), 3)
        for from_json, from_csv in pairs:
            self.assertGreater(from_json["fabric_seconds"], 0)
            self.assertAlmostEqual(from_json["fabric_seconds"] / from_csv["fabric_seconds"], 1, places=6)

    def test_an_operation_the_sweep_lacks_is_a_note_not_a_guess(self):
        path = os.path.join(self.dir, "ddp.json")
        code, out, err = run(os.path.join(TRACES, "ddp-default"), "--fabric", self.sweep, "--json", path)
        self.assertEqual(code, 0, err)
        with open(path) as f:
            doc = json.load(f)
        self.assertTrue(all(c["fabric_ratio"] is None for c in doc["collectives"]))
        self.assertIn("no fabric figure", out)
        self.assertEqual(doc["fabric"]["verdict"], "no call of the job could be held against the fabric")
        self.assertEqual(doc["fabric"]["cause"], "")
        self.assertNotIn("top cause:", out)

    def test_a_sweep_of_other_nodes_converts_through_busbw_and_says_so(self):
        # The same sweep as if measured on 4 nodes: the one-node job's calls are converted
        # through busbw, and those below the sweep's smallest size take its time.
        other = os.path.join(self.dir, "sweep-4-nodes.csv")
        with open(self.sweep, newline="") as f:
            rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
        with open(other, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            writer.writeheader()
            for row in rows:
                writer.writerow(dict(row, nodes="4"))
        path = os.path.join(self.dir, "zero3-4-nodes.json")
        code, out, err = run(os.path.join(TRACES, "zero3"), "--fabric", other, "--json", path)
        self.assertEqual(code, 0, err)
        with open(path) as f:
            doc = json.load(f)
        smallest = self.sweep_points("allgather")[0]
        small = [c for c in doc["collectives"] if c["op"] == "allgather" and c["bytes"] < smallest[0]]
        self.assertEqual(len(small), 1)
        self.assertAlmostEqual(small[0]["fabric_seconds"], smallest[1], delta=smallest[1] * 1e-3)
        for note in (f"--fabric {other} allgather over 4 ranks on 1 node: converted through busbw from the sweep's "
                     "4 ranks on 4 nodes (extrapolated)",
                     f"--fabric {other} allgather over 4 ranks: sizes below the sweep's smallest ({smallest[0]} B) "
                     "take its time (extrapolated)"):
            self.assertIn(note, doc["provenance"]["notes"])
            self.assertIn("# note: " + note + "\n", out)

    def test_the_top_cause_is_the_one_that_cost_the_most(self):
        """Against a real sweep of this machine (results/mpi-host-2core/default-sweep.csv):
        the straggler run's top cause is the rank that slept, and the time each of the others
        waited for it is from its calls to that rank's; a healthy run's is not."""
        sweep = os.path.join(HERE, "..", "..", "results", "mpi-host-2core", "default-sweep.csv")
        docs = {}
        for case in ("straggler", "llama-fsdp2"):
            path = os.path.join(self.dir, case + "-cause.json")
            code, out, err = run(os.path.join(TRACES, case), "--fabric", sweep, "--json", path)
            self.assertEqual(code, 0, err)
            with open(path) as f:
                docs[case] = json.load(f)
            self.assertIn("top cause: " + docs[case]["fabric"]["cause"], out)
            # One host: nothing crossed a NIC, and the report says so rather than a rate.
            self.assertIn("nics: the job ran on one node (its traces name one host): nothing crossed a NIC", out)
            self.assertFalse(docs[case]["nics"]["crosses_nodes"])
            self.assertIsNone(docs[case]["nics"]["gbps_per_nic"])
        # The ranks share one host's clock: each other rank waits from its call to rank 2's.
        issued = [sorted(e["ts"] for e in load(path)["traceEvents"] if e.get("name", "").startswith("c10d::"))
                  for path in rank_files("straggler")]
        waited = sum(sum(end - start for start, end in merged([(issued[r][i], issued[2][i]) for i in (0, 1)]))
                     for r in (0, 1, 3)) / 3 * 1e-6
        self.assertTrue(docs["straggler"]["fabric"]["cause"].startswith(
            f"one straggling rank: rank 2 (vm) arrives last at 2 of 2 calls; each of the others waits "
            f"{waited * 1e3:.3g} ms in all for it"), docs["straggler"]["fabric"]["cause"])
        self.assertFalse(docs["llama-fsdp2"]["fabric"]["cause"].startswith("one straggling rank"))


class MeasuredFabric(unittest.TestCase):
    """--measure-fabric: the job's own collectives measured on this job's MPI ranks."""

    def measure(self, ranks, *args):
        folder = tempfile.mkdtemp(prefix="commbench-replay-measured-")
        self.addCleanup(shutil.rmtree, folder, True)
        path = os.path.join(folder, "r.json")
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   OMPI_MCA_mpi_yield_when_idle="1")
        p = subprocess.run([MPIEXEC, "-q", "--oversubscribe", "-np", str(ranks), BIN, *args, "--measure-fabric",
                            "--backend", "mpi", "-n", "3", "-w", "1", "--json", path],
                           capture_output=True, text=True, timeout=300, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(path) as f:
            return p.stdout, json.load(f)

    def test_every_class_gets_a_figure_measured_at_its_size_on_the_jobs_ranks(self):
        out, doc = self.measure(4, os.path.join(TRACES, "zero3"))
        self.assertEqual(doc["fabric"]["basis"], "--measure-fabric: measured here on 4 ranks, 1 node")
        self.assertEqual(len(doc["collectives"]), 4)
        for c in doc["collectives"]:
            with self.subTest(op=c["op"], bytes=c["bytes"]):
                self.assertGreater(c["fabric_busbw_gbps"], 0)
                self.assertAlmostEqual(c["fabric_ratio"], c["busbw_gbps"] / c["fabric_busbw_gbps"], places=6)
                # The fabric's time for one call is its size over the measured algbw.
                self.assertAlmostEqual(c["fabric_busbw_gbps"] * c["fabric_seconds"] * 1e9,
                                       c["bytes"] * (2 * 3 / 4 if c["op"] == "allreduce" else 3 / 4), delta=1)
        self.assertIn("(--measure-fabric: measured here on 4 ranks, 1 node)", out)
        self.assertRegex(out, r"# 4 files read and 4 cases measured here in [0-9.]+ s\n")

    def test_a_job_of_other_groups_is_held_against_this_jobs_through_busbw(self):
        out, doc = self.measure(2, os.path.join(TRACES, "zero3"))
        self.assertEqual(doc["fabric"]["basis"], "--measure-fabric: measured here on 2 ranks, 1 node")
        note = "allgather: the job's groups of 4 ranks held against allgather measured on this job's 2 ranks, through busbw"
        self.assertIn(note, doc["provenance"]["notes"])
        self.assertIn("# note: " + note + "\n", out)


if __name__ == "__main__":
    unittest.main()
