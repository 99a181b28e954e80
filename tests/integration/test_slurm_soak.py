"""Soak runs on the real Slurm test cluster: a 20 s healthy bench-validate soak reports no
event (false alarms over longer healthy soaks: results/slurm-cluster/soak/); a node whose link is throttled for 15 s (slurm-cluster.sh degrade, then off) is one
node event on that node, its start and end within 5 s of the injection, exit 1 and its
--exclude, and a link between two nodes throttled the same way later in the same soak
(slurm-cluster.sh degrade-link) is one event on that link; bench-collectives --soak names
its case's dip and the throttled node's rail. Skips where the machine cannot host the
cluster."""
import datetime
import json
import os
import subprocess
import threading
import time
import unittest

from test_slurm import BIN, CLUSTER, NODES, ClusterTest, cluster, environment

# Pair rounds of 20 x 4 MiB: long enough (about 0.2 s) that a process of the 2-core host
# stalled for a moment does not halve a reading (results/slurm-cluster/soak/README.md).
# A pair across a link shaped to 500 Mbit/s reads about 0.03 GB/s against a healthy 0.45
# and its round takes about 3 s: a throttled node's 15 s dip is read about six times, a
# throttled link's about three (each meeting of its two ends).
SOAK = ["--backend", "mpi", "-b", "4M", "-n", "20", "-w", "1"]
INJECT_AT, INJECT_FOR = 20, 15


def unix_time(utc):
    return datetime.datetime.strptime(utc, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()


def readings_around(doc, windows, margin=3):
    """The pair readings from `margin` s before each window to as long after it, one short
    line each: what a failed assertion needs to tell a slow node from a slow link."""
    return ["{:.1f}-{:.1f} {}-{} {:.3g}".format(r["start_s"], r["end_s"], r["node_a"][-1], r["node_b"][-1], r["gbps"])
            for r in doc["intervals"] if r["what"] == "pair"
            and any(on - margin <= r["start_s"] <= off + margin for on, off in windows)]


class Soak(ClusterTest):
    def soak(self, name, program, injections=()):
        """Runs the soak; each injection (AT, ON, OFF) runs the cluster command ON at AT s
        after the soak began and OFF INJECT_FOR s later. Returns (exit code, stdout,
        document, each injected window in seconds since the soak began)."""
        json_path = self.path(name + ".json")
        command = [CLUSTER, "run", "srun", "--mpi=pmix", "-N", "4", os.path.join(BIN, program[0]), *program[1:],
                   "--json", json_path, "--csv", self.path(name + ".csv")]
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                   env=environment(), cwd=self.dir)
        lines, began = [], threading.Event()

        def read():
            for line in process.stdout:
                lines.append(line)
                if line.startswith("# soak:") or line.lstrip().startswith("allreduce"):
                    began.set()
            began.set()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        windows, restore = [], None
        try:
            if injections:
                self.assertTrue(began.wait(120), "".join(lines))
            start = time.time()
            for at, on, off in injections:
                time.sleep(max(0.0, start + at - time.time()))
                begun = time.time()
                restore = off
                self.assertEqual(cluster(*on).returncode, 0)
                time.sleep(INJECT_FOR)
                self.assertEqual(cluster(*off).returncode, 0)
                restore = None
                windows.append((begun, time.time()))
        finally:
            if restore:
                cluster(*restore)
            rc = process.wait(timeout=300)
            reader.join(30)
            process.stdout.close()
        out = "".join(lines)
        with open(json_path) as f:
            doc = json.load(f)
        started = unix_time(doc["soak"]["started_utc"])
        return rc, out, doc, [(on - started, off - started) for on, off in windows]

    def assert_window(self, event, window):
        self.assertAlmostEqual(event["start_s"], window[0], delta=5, msg=(event, window))
        self.assertAlmostEqual(event["end_s"], window[1], delta=5, msg=(event, window))

    def test_a_healthy_soak_reports_no_event(self):
        rc, out, doc, _ = self.soak("healthy", ("bench-validate", *SOAK, "--soak", "20"))
        self.assertEqual(rc, 0, out)
        self.assertIn("events: 0 (0 failing)", out)
        self.assertEqual(doc["events"], [])
        self.assertGreaterEqual(doc["soak"]["intervals"], 15)
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

    def test_a_throttled_node_and_later_a_throttled_link_are_one_event_each(self):
        # One soak for both (CI's time): cb-node3's link from 20 s, the link cb-node1 -
        # cb-node2 from 55 s, each for 15 s, with 20 s of healthy readings between them.
        rc, out, doc, windows = self.soak(
            "node-then-link", ("bench-validate", *SOAK, "--soak", "90"),
            [(INJECT_AT, ("degrade", "cb-node3", "500mbit"), ("degrade", "cb-node3", "off")),
             (INJECT_AT + INJECT_FOR + 20, ("degrade-link", "cb-node1", "cb-node2", "500mbit"),
              ("degrade-link", "cb-node1", "cb-node2", "off"))])
        self.assertEqual(rc, 1, out)
        events = doc["events"]
        self.assertEqual([(e["kind"], e["node_a"], e["node_b"], e["result"]) for e in events],
                         [("node", "cb-node3", "", "fail"), ("link", "cb-node1", "cb-node2", "fail")],
                         (events, windows, readings_around(doc, windows)))
        self.assert_window(events[0], windows[0])
        self.assert_window(events[1], windows[1])
        self.assertIn("FAIL node cb-node3 from ", out)
        self.assertIn("FAIL link cb-node1 - cb-node2 from ", out)
        # cb-node3, and one end of the link (srun adds its own lines after the exclude line).
        self.assertIn(doc["exclude_option"], ("--exclude=cb-node[1,3]", "--exclude=cb-node[2-3]"))
        self.assertIn("\n" + doc["exclude_option"] + "\n", out)

    def test_a_collective_soak_names_the_dip_and_the_throttled_nodes_rail(self):
        # 5 iterations a case: a throttled case then takes about 1.5 s, several intervals of
        # the 15 s, each judging the rails anew.
        program = ("bench-collectives", "--backend", "mpi", "--op", "allreduce", "-b", "4M", "-e", "4M", "-n", "5",
                   "-w", "1", "--soak", "45")
        rc, out, doc, windows = self.soak(
            "collectives", program, [(15, ("degrade", "cb-node3", "500mbit"), ("degrade", "cb-node3", "off"))])
        self.assertEqual(rc, 1, out)
        events = doc["soak"]["events"]
        self.assertEqual([(e["case"].split()[0], e["result"], e["nodes"]) for e in events],
                         [("allreduce", "fail", ["cb-node3"])], (events, windows))
        self.assertTrue(events[0]["short_rails"][0].startswith("cb-node3 eth0 (short in "), events)
        self.assert_window(events[0], windows[0])
        self.assertIn("\n--exclude=cb-node3\n", out)
        # The failure names the rule's own fraction, not a flag bench-collectives lacks.
        self.assertIn("soak: a case's busbw dipped below 75 % of its steady level", out)
        self.assertEqual({row["interval"] for row in doc["rows"]}, set(range(doc["soak"]["intervals"])))


if __name__ == "__main__":
    # Exit 77 (ctest's "skipped") when the cluster could not come up, as test_slurm.py does.
    result = unittest.main(exit=False, verbosity=2).result
    if not result.wasSuccessful():
        raise SystemExit(1)
    raise SystemExit(77 if result.skipped and result.testsRun <= len(result.skipped) else 0)
