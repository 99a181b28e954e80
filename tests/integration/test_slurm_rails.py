"""What each NIC carried (bench-collectives --nic-counters) on the real Slurm test cluster:
every node's interface is reported for every case, a healthy run flags no rail, and with
one node's link throttled (slurm-cluster.sh degrade) the rails table and its note name
that node's interface and no other. Skips where the machine cannot host the cluster."""
import json
import os
import re
import unittest

from test_slurm import BIN, NODES, ClusterTest, cluster, csv_rows

SWEEP = ["--backend", "mpi", "--op", "allreduce,allgather", "-b", "4M", "-e", "16M", "-f", "4", "-n", "5", "-w", "1"]


class Rails(ClusterTest):
    def collectives(self, name):
        json_path, csv_path = self.path(name + ".json"), self.path(name + ".csv")
        p = self.run_on_cluster("srun", "--mpi=pmix", "-N", "4", os.path.join(BIN, "bench-collectives"), *SWEEP,
                                "--json", json_path, "--csv", csv_path)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(json_path) as f:
            doc = json.load(f)
        return p.stdout, doc, csv_path

    def rails_table(self, stdout):
        """node -> (cases, flagged/compared) from the console's rails table."""
        table = stdout[stdout.index("# rails: what each node's port carried"):]
        rows = {}
        for line in table.splitlines():
            m = re.match(r"^# (cb-node\d)\s+eth0\s+(\d+)\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+\s+(\d+)/(\d+)$", line)
            if m:
                rows[m.group(1)] = (int(m.group(2)), int(m.group(3)), int(m.group(4)))
        return rows

    def test_a_healthy_run_reports_every_nodes_interface_and_flags_none(self):
        stdout, doc, csv_path = self.collectives("healthy")
        cases = {(r["op"], r["bytes"]) for r in doc["rows"]}
        self.assertEqual(len(cases), 4)
        rails = [n for n in doc["nics"] if n["rail"]]
        self.assertEqual(sorted((n["op"], n["bytes"], n["node"]) for n in rails),
                         sorted((op, size, node) for op, size in cases for node in NODES))
        for n in rails:
            self.assertEqual(n["nic"], "eth0")
            self.assertFalse(n["rdma"])
            self.assertFalse(n["flagged"], n)
            # Each node moves at least its share of the case: a ring's 2(n-1)/n of it (allreduce)
            # or (n-1)/n (allgather), sent and received.
            share = (1.5 if n["op"] == "allreduce" else 0.75) * n["bytes"]
            self.assertGreater(n["tx_bytes"], share)
            self.assertGreater(n["rx_bytes"], share)
            self.assertGreater(n["peak_gbps"], n["gbps"])
        self.assertNotIn("lo", {n["nic"] for n in doc["nics"]})
        self.assertEqual(self.rails_table(stdout), {node: (4, 0, 4) for node in NODES})
        self.assertNotIn("fell short", stdout)
        _, csv = csv_rows(csv_path)  # the CSV holds the rows only
        self.assertEqual(len(csv), 4)

    def test_a_pattern_step_and_a_replayed_one_say_what_each_nodes_interface_carried(self):
        """bench-patterns across the 4 nodes, and bench-replay --replay of a traced step
        there: the rails table over the measured steps and the JSON's `nics`."""
        traces = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "traces", "zero3")
        for name, program in (("patterns", ["bench-patterns", "--pattern", "ddp", "--params", "4M", "--layers", "2"]),
                              ("replay", ["bench-replay", traces, "--replay"])):
            with self.subTest(name=name):
                json_path = self.path(name + ".json")
                p = self.run_on_cluster("srun", "--mpi=pmix", "-N", "4", os.path.join(BIN, program[0]), *program[1:],
                                        "--backend", "mpi", "-n", "2", "-w", "1", "--json", json_path)
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                with open(json_path) as f:
                    doc = json.load(f)
                self.assertEqual(sorted(n["node"] for n in doc["nics"]), NODES)
                for n in doc["nics"]:
                    self.assertEqual(n["nic"], "eth0")
                    self.assertGreater(n["tx_bytes"], 0)
                    self.assertGreater(n["rx_bytes"], 0)
                    self.assertAlmostEqual(n["gbps"], (n["tx_bytes"] + n["rx_bytes"]) / n["seconds"] / 1e9, places=6)
                    self.assertGreaterEqual(n["peak_gbps"], n["gbps"])
                self.assertEqual(set(self.rails_table(p.stdout)), set(NODES))

    def test_a_throttled_node_is_named_by_its_interface_and_no_other(self):
        degrade = cluster("degrade", "cb-node3", "200mbit")
        self.assertEqual(degrade.returncode, 0, degrade.stderr)
        try:
            stdout, doc, _ = self.collectives("degraded")
        finally:
            restored = cluster("degrade", "cb-node3", "off")
        self.assertEqual(restored.returncode, 0, restored.stderr)
        table = self.rails_table(stdout)
        self.assertEqual(table["cb-node3"], (4, 4, 4), stdout)
        notes = [line for line in stdout.splitlines() if "fell short" in line]
        self.assertEqual(len(notes), 1, stdout)
        self.assertTrue(notes[0].startswith("# note: rail cb-node3 eth0 fell short in 4 of 4 compared cases; "
                                            "first at allreduce 4194304 bytes: its busiest interval reached "),
                        notes[0])
        self.assertTrue(notes[0].endswith(": a slow link"), notes[0])
        self.assertIn(notes[0][len("# note: "):], doc["provenance"]["notes"])
        flagged = [n for n in doc["nics"] if n["flagged"] and n["node"] == "cb-node3"]
        self.assertEqual(len(flagged), 4)


if __name__ == "__main__":
    # Exit 77 (ctest's "skipped") when the cluster could not come up, as test_slurm.py does.
    result = unittest.main(exit=False, verbosity=2).result
    if not result.wasSuccessful():
        raise SystemExit(1)
    raise SystemExit(77 if result.skipped and result.testsRun <= len(result.skipped) else 0)
