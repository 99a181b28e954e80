"""How soon a job ends when a rank stalls, stops or waits on a file that never delivers, and
how long bench-topology takes on this machine: judgements of speed, under the ctest label
speed and run alone, since the ranks of a test beside them on the same cores make a healthy
job read slower at random. What such a job says and its exit code are the ordinary tests'
(test_collectives_faults, test_collectives_input, test_bench_topology, test_patterns_tuning);
here only the time is judged.
"""
import json
import os
import signal
import subprocess
import time
import unittest

import test_bench_collectives as collectives
import test_bench_topology as topology
import test_collectives_faults as faults
import test_patterns_tuning as tuning
from process_helpers import alive, run_stalled


def kill_left_over(pids):
    for pid in pids:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


class CollectivesDeadlines(collectives.TempDirTest):
    """bench-collectives ends within its -T timeout + 10 s of a rank's stall or stop."""

    def test_a_stopped_rank_ends_the_job_within_the_timeout_and_10_s(self):
        timeout_s = 5
        proc, pids, victim = faults.start_mid_sweep(self.path("rows.csv"), timeout_s)
        self.addCleanup(kill_left_over, pids)
        self.assertIsNotNone(victim)
        os.kill(victim, signal.SIGSTOP)
        stopped_at = time.monotonic()
        _, err = proc.communicate(timeout=timeout_s + 30)
        self.assertEqual(proc.returncode, 4, err)
        self.assertLessEqual(time.monotonic() - stopped_at, timeout_s + 10, err)

    def test_a_rank_stalled_in_a_phase_ends_the_job_within_the_timeout_and_10_s(self):
        # Before the heartbeat channel, while measuring, and in MPI start-up (at least 5 s
        # whatever -T says).
        timeout_s = 4
        for phase, limit in (("opening the heartbeat channel", timeout_s), ("(timed batch", timeout_s),
                             ("starting MPI", 5)):
            with self.subTest(phase=phase):
                command = faults.stalled_sweep(self.path("out.json"), timeout_s)
                rc, err, elapsed, ranks = run_stalled(command, phase, timeout_s)
                self.addCleanup(kill_left_over, ranks)
                self.assertIn("rank 1 stops itself at", err)
                self.assertEqual(rc, 4, err)
                self.assertLessEqual(elapsed, limit + 10, err)

    def test_a_rules_file_that_never_delivers_ends_the_job_within_the_timeout_and_10_s(self):
        fifo = self.path("rules.fifo")
        os.mkfifo(fifo)
        started = time.monotonic()
        rc, _, err = collectives.run(2, "--op", "allreduce,broadcast", "-b", "1K", "-e", "16K", "-n", "3",
                                     "--thresholds", fifo, "-T", "2", timeout=60)
        self.assertEqual(rc, 4, err)
        self.assertLess(time.monotonic() - started, 2 + 10)


@unittest.skipUnless(topology.MPIEXEC, "built without MPI")
class TopologyDeadlines(topology.TempDirTest):
    def test_a_rank_stalled_while_probing_or_gathering_ends_the_job_within_the_timeout_and_10_s(self):
        for phase in ("probing this node", "gathering the nodes' models"):
            with self.subTest(phase=phase):
                env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                           COMMBENCH_DEBUG_STALL="1:" + phase)
                started = time.monotonic()
                p = subprocess.run([topology.MPIEXEC, "-q", "--oversubscribe", "-np", "3", topology.BIN, "-T", "2"],
                                   capture_output=True, text=True, timeout=60, env=env)
                self.assertEqual(p.returncode, 4, p.stderr)
                self.assertLess(time.monotonic() - started, 2 + 10)

    def test_four_ranks_probe_this_node_in_under_2_s_and_end_within_a_minute(self):
        started = time.monotonic()
        rc, _, err = topology.run("--json", self.path("t.json"), np=4)
        elapsed = time.monotonic() - started
        self.assertEqual(rc, 0, err)
        with open(self.path("t.json")) as f:
            doc = json.load(f)
        self.assertLess(doc["probe_seconds"], 2.0)  # the bound for probing one node
        self.assertLess(elapsed, 60)


class TuningDeadlines(collectives.TempDirTest):
    """--tune ends soon after a rank stalls in an agreement between trials."""

    TIMEOUT_S = 4

    def test_a_rank_stalled_between_trials_ends_the_job_within_the_timeout_and_40_s(self):
        for phase in ("agreeing on the tuning budget", "agreeing on the search's time"):
            with self.subTest(phase=phase):
                command = tuning.stalled_tuning(self.path("ddp.json"), self.TIMEOUT_S, phase)
                for _ in range(2):
                    code, err, elapsed, ranks = run_stalled(command, phase, self.TIMEOUT_S)
                    self.addCleanup(kill_left_over, ranks)
                    # A run that outlasted MPI_Init's floor under load never reached the
                    # phase (test_patterns_tuning.TuningStall): it runs once more.
                    if "starting MPI (MPI_Init) did not complete" not in err and "rank 1 stops itself at" in err:
                        break
                self.assertIn("rank 1 stops itself at", err)
                self.assertEqual(code, 4, err)
                # The time includes the search up to the phase (trials in the later phases),
                # about 20 s under a sanitizer on 2 cores; a rank waited for in silence would
                # run to run_stalled's limit (timeout + 60 s) instead.
                self.assertLessEqual(elapsed, self.TIMEOUT_S + 40, err)


if __name__ == "__main__":
    unittest.main()
