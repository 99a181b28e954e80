"""bench-validate --soak on the real Slurm test cluster: a 60 s healthy soak reports no
event; a node whose link is throttled for 15 s in the middle (slurm-cluster.sh degrade,
then off) is one node event on that node, its start and end within 5 s of the injection,
exit 1 and its --exclude; a link between two nodes throttled the same way
(slurm-cluster.sh degrade-link) is one event on that link. Skips where the machine cannot
host the cluster."""
import datetime
import json
import os
import subprocess
import threading
import time
import unittest

from test_slurm import BIN, CLUSTER, NODES, ClusterTest, cluster, environment

# Pair rounds of 20 x 4 MiB: long enough (about 0.2 s) that a process of the 2-core host
# stalled for a moment does not halve a reading, short enough that a throttled pair
# (200 Mbit/s) still finishes one in about 3.5 s, so the dip is read several times while it
# lasts (results/slurm-cluster/soak/README.md).
SOAK = ["--backend", "mpi", "--soak", "60", "-b", "4M", "-n", "20", "-w", "1"]
INJECT_AT, INJECT_FOR = 20, 15


def unix_time(utc):
    return datetime.datetime.strptime(utc, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()


class Soak(ClusterTest):
    def soak(self, name, inject=None, restore=None, program=("bench-validate", *SOAK)):
        """Runs the soak; with `inject`, runs it INJECT_AT s after the soak began and
        `restore` INJECT_FOR s later. Returns (exit code, stdout, document, injected
        window in seconds since the soak began)."""
        json_path = self.path(name + ".json")
        command = [CLUSTER, "run", "srun", "--mpi=pmix", "-N", "4", os.path.join(BIN, program[0]), *program[1:],
                   "--json", json_path, "--csv", self.path(name + ".csv")]
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                   env=environment(), cwd=self.dir)
        lines, began = [], threading.Event()

        def read():
            for line in process.stdout:
                lines.append(line)
                if line.startswith(("# soak:", "# rows")) or line.lstrip().startswith("allreduce"):
                    began.set()
            began.set()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        window = None
        try:
            if inject:
                self.assertTrue(began.wait(120), "".join(lines))
                time.sleep(INJECT_AT)
                on = time.time()
                self.assertEqual(cluster(*inject).returncode, 0)
                time.sleep(INJECT_FOR)
                off = time.time()
                window = (on, off)
        finally:
            if restore:
                self.assertEqual(cluster(*restore).returncode, 0)
            rc = process.wait(timeout=300)
            reader.join(30)
        out = "".join(lines)
        with open(json_path) as f:
            doc = json.load(f)
        if window:
            started = unix_time(doc["soak"]["started_utc"])
            window = (window[0] - started, window[1] - started)
        return rc, out, doc, window

    def assert_one_event(self, doc, window, kind, node_a, node_b):
        events = doc["events"]
        self.assertEqual([(e["kind"], e["node_a"], e["node_b"], e["result"]) for e in events],
                         [(kind, node_a, node_b, "fail")], (events, window))
        self.assertAlmostEqual(events[0]["start_s"], window[0], delta=5, msg=(events, window))
        self.assertAlmostEqual(events[0]["end_s"], window[1], delta=5, msg=(events, window))

    def test_a_healthy_soak_reports_no_event(self):
        rc, out, doc, _ = self.soak("healthy")
        self.assertEqual(rc, 0, out)
        self.assertIn("events: 0 (0 failing)", out)
        self.assertEqual(doc["events"], [])
        self.assertGreaterEqual(doc["soak"]["intervals"], 50)
        pairs = [r for r in doc["intervals"] if r["what"] == "pair"]
        self.assertEqual(len(pairs), 2 * doc["soak"]["intervals"])
        # Every interval says what each node's rail carried in its round.
        nics = [r for r in doc["intervals"] if r["what"] == "nic"]
        self.assertEqual(sorted({(r["interval"], r["node_a"]) for r in nics}),
                         sorted((i, node) for i in range(doc["soak"]["intervals"]) for node in NODES))
        for r in nics:
            self.assertEqual(r["nic"], "eth0")
            self.assertGreater(r["bytes"], 2 * 4 << 20)  # at least one 4 MiB message each way
            self.assertGreater(r["peak_gbps"], 0)

    def test_a_node_throttled_in_the_middle_is_one_event_on_that_node(self):
        rc, out, doc, window = self.soak("node", inject=("degrade", "cb-node3", "200mbit"),
                                         restore=("degrade", "cb-node3", "off"))
        self.assertEqual(rc, 1, out)
        self.assert_one_event(doc, window, "node", "cb-node3", "")
        self.assertEqual(doc["exclude_option"], "--exclude=cb-node3")
        self.assertIn("\n--exclude=cb-node3\n", out)  # srun adds its own lines after it

    def test_a_throttled_link_is_reported_as_that_link(self):
        rc, out, doc, window = self.soak("link", inject=("degrade-link", "cb-node1", "cb-node2", "200mbit"),
                                         restore=("degrade-link", "cb-node1", "cb-node2", "off"))
        self.assertEqual(rc, 1, out)
        self.assert_one_event(doc, window, "link", "cb-node1", "cb-node2")
        self.assertIn("FAIL link cb-node1 - cb-node2 from ", out)

    def test_a_collective_soak_names_the_dip_and_the_throttled_nodes_rail(self):
        program = ("bench-collectives", "--backend", "mpi", "--op", "allreduce", "-b", "4M", "-e", "4M", "-n", "20",
                   "-w", "1", "--soak", "50")
        rc, out, doc, window = self.soak("collectives", inject=("degrade", "cb-node3", "200mbit"),
                                         restore=("degrade", "cb-node3", "off"), program=program)
        self.assertEqual(rc, 1, out)
        events = doc["soak"]["events"]
        self.assertEqual([(e["case"].split()[0], e["result"], e["nodes"]) for e in events],
                         [("allreduce", "fail", ["cb-node3"])], (events, window))
        self.assertTrue(events[0]["short_rails"][0].startswith("cb-node3 eth0 (short in "), events)
        self.assertAlmostEqual(events[0]["start_s"], window[0], delta=5, msg=(events, window))
        self.assertAlmostEqual(events[0]["end_s"], window[1], delta=5, msg=(events, window))
        self.assertIn("\n--exclude=cb-node3\n", out)
        self.assertEqual({row["interval"] for row in doc["rows"]}, set(range(doc["soak"]["intervals"])))


if __name__ == "__main__":
    # Exit 77 (ctest's "skipped") when the cluster could not come up, as test_slurm.py does.
    result = unittest.main(exit=False, verbosity=2).result
    if not result.wasSuccessful():
        raise SystemExit(1)
    raise SystemExit(77 if result.skipped and result.testsRun <= len(result.skipped) else 0)
