"""bench-collectives when something goes wrong in the job: SIGINT/SIGTERM mid-sweep, a rank
killed or stopped (fault injection), and a rank stalled in any phase from MPI start-up to
finalizing (the watchdog's exit 4 naming the rank, its host and the phase)."""
import csv
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import time
import unittest

from process_helpers import alive, children_of, run_stalled
from test_bench_collectives import BIN, COLUMNS, MPIEXEC, TempDirTest, run


def line_count(path):
    try:
        with open(path) as f:
            return f.read().count("\n")
    except OSError:
        return 0


class Failures(TempDirTest):
    def test_corrupted_output_fails_the_check_naming_op_size_and_rank(self):
        csv_path = self.path("rows.csv")
        rc, out, err = run(2, "--op", "allreduce", "-b", "1K", "-e", "2K", "-n", "2", "-c", "--debug-corrupt-rank", "1",
                           "--csv", csv_path)
        self.assertEqual(rc, 1, err)
        lines = err.strip().splitlines()
        self.assertEqual(lines, [
            "bench-collectives: error: check failed: allreduce 1KiB float sum out-of-place: "
            "1 wrong elements, first on rank 1 (host " + lines[0].split("(host ")[1],
            "bench-collectives: error: check failed: allreduce 2KiB float sum out-of-place: "
            "1 wrong elements, first on rank 1 (host " + lines[1].split("(host ")[1],
        ])
        with open(csv_path) as f:
            self.assertEqual([r["wrong"] for r in csv.DictReader(f)], ["1", "1"])

    def test_json_that_cannot_be_written_at_the_end_exits_3_cleanly(self):
        # The JSON's directory disappears while the sweep runs: every rank agrees on the
        # failure, so the job ends with one line and exit 3, not an MPI abort.
        csv_path, json_dir = self.path("rows.csv"), self.path("gone")
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        proc = subprocess.Popen([MPIEXEC, "-q", "--oversubscribe", "-np", "2", BIN, "--op", "allreduce", "-b", "8",
                                 "-e", "64K", "-n", "2000", "--csv", csv_path, "--json", json_dir + "/out.json"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        deadline = time.time() + 30
        while line_count(csv_path) < 1 and time.time() < deadline:
            time.sleep(0.02)
        shutil.rmtree(json_dir)
        out, err = proc.communicate(timeout=120)
        self.assertEqual(proc.returncode, 3, err)
        self.assertEqual(err.splitlines(), [f"bench-collectives: error: --json {json_dir}/out.json: cannot create a "
                                            "temporary file beside it: No such file or directory"])
        self.assertEqual(line_count(csv_path), 1 + 14)  # every row is still in the CSV

    def test_timeout_exits_4_naming_rank_host_and_step(self):
        rc, out, err = run(2, "--op", "allreduce", "-b", "64M", "-e", "64M", "-n", "3", "-T", "0.001")
        self.assertEqual(rc, 4, err)
        # The first guarded step that outlasts 1 ms ends the job, whichever it is on a busy
        # machine (under ASan, planning the sweep has been that step); StallInEveryPhase
        # covers each phase by name.
        self.assertRegex(err, r"bench-collectives: timeout: rank [01] \(host [^)]+\): [a-z][^\n]* "
                              r"did not complete within 0\.001 s \(-T/--timeout\)")


class Interruption(TempDirTest):
    """SIGTERM/SIGINT mid-sweep: finished rows survive, JSON says incomplete, no orphans."""

    def interrupt(self, sig, target):
        csv_path, json_path = self.path("rows.csv"), self.path("rows.json")
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        proc = subprocess.Popen([MPIEXEC, "-q", "--oversubscribe", "-np", "4", BIN, "--op", "allreduce,allgather",
                                 "-b", "8", "-e", "64M", "--csv", csv_path, "--json", json_path, "--format", "csv"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        deadline = time.time() + 60
        while time.time() < deadline:  # wait until some rows are on disk
            if line_count(csv_path) >= 4:
                break
            time.sleep(0.1)
        ranks = children_of(proc.pid)
        self.assertEqual(len(ranks), 4)
        for pid in (ranks if target == "ranks" else [proc.pid]):
            os.kill(pid, sig)
        out, err = proc.communicate(timeout=60)
        # A signalled mpirun may return a moment before its ranks have written their
        # results and exited; they must all be gone within a few seconds (no orphans).
        deadline = time.time() + 10
        while any(alive(pid) for pid in ranks) and time.time() < deadline:
            time.sleep(0.1)
        for pid in ranks:
            self.assertFalse(alive(pid), f"rank process {pid} outlived the job by 10 s")
        with open(csv_path, newline="") as f:
            rows = list(csv.DictReader(f))
        self.assertGreaterEqual(len(rows), 3)
        for r in rows:  # every line whole: all columns, numbers parse
            self.assertEqual(len(r), len(COLUMNS))
            self.assertIsNone(r.get(None))
            float(r["busbw_gbps"])
        with open(json_path) as f:
            doc = json.load(f)
        self.assertFalse(doc["complete"])
        self.assertEqual(len(doc["rows"]), len(rows))
        self.assertEqual(doc["summary"]["exit_code"], 128 + sig)
        self.assertEqual(glob.glob(json_path + ".tmp*"), [])
        name = "SIGTERM" if sig == signal.SIGTERM else "SIGINT"
        self.assertIn(f"bench-collectives: error: interrupted by {name}; rows measured so far are kept", err)
        return proc.returncode

    def test_sigterm_to_the_ranks_as_slurm_sends_it(self):
        self.assertEqual(self.interrupt(signal.SIGTERM, "ranks"), 143)

    def test_sigint_to_the_ranks(self):
        self.assertEqual(self.interrupt(signal.SIGINT, "ranks"), 130)

    def test_sigterm_to_mpirun(self):
        # mpirun forwards the signal and reports its own failure status (1).
        self.assertNotEqual(self.interrupt(signal.SIGTERM, "mpirun"), 0)


def rank_pid(mpirun_pid, rank):
    for pid in children_of(mpirun_pid):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = dict(v.split(b"=", 1) for v in f.read().split(b"\0") if b"=" in v)
        except OSError:
            continue
        if env.get(b"OMPI_COMM_WORLD_RANK") == str(rank).encode():
            return pid
    return None


def start_mid_sweep(rows_csv, timeout_s, quiet=True):
    """bench-collectives on 4 ranks with -T timeout_s, once some of its rows are out:
    (mpirun, its rank processes, rank 2's process or None)."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    cmd = [MPIEXEC, *(["-q"] if quiet else []), "--oversubscribe", "-np", "4", BIN, "--op", "allreduce", "-b", "8",
           "-e", "64M", "-T", str(timeout_s), "--csv", rows_csv]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.time() + 60
    while time.time() < deadline:  # mid-sweep: some rows are out
        if line_count(rows_csv) >= 3:
            break
        time.sleep(0.1)
    return proc, children_of(proc.pid), rank_pid(proc.pid, 2)


class FaultInjection(TempDirTest):
    """A rank that stops or dies mid-sweep: the job ends and names it (how soon:
    test_deadlines, label speed)."""

    TIMEOUT_S = 5

    def start(self, quiet=True):
        proc, pids, victim = start_mid_sweep(self.path("rows.csv"), self.TIMEOUT_S, quiet)
        self.assertIsNotNone(victim)
        return proc, pids, victim

    def finish(self, proc, pids):
        out, err = proc.communicate(timeout=self.TIMEOUT_S + 30)
        deadline = time.time() + 10
        while any(alive(pid) for pid in pids) and time.time() < deadline:
            time.sleep(0.1)
        self.assertFalse(any(alive(pid) for pid in pids), "orphan rank processes")
        return err

    def test_stopped_rank_is_named_and_the_job_exits_4(self):
        proc, pids, victim = self.start()
        os.kill(victim, signal.SIGSTOP)
        err = self.finish(proc, pids)
        self.assertEqual(proc.returncode, 4, err)
        self.assertRegex(err, r"bench-collectives: timeout: rank 0 \(host [^)]+\): .* did not complete within 5 s "
                              r"\(-T/--timeout\); not responding: rank 2 \(host [^)]+\) "
                              r"(silent for|never reported)")  # stopped before its first heartbeat arrived
        self.assertNotRegex(err, r"not responding: .*rank [013] \(")

    def test_killed_rank_ends_the_job_and_is_named(self):
        proc, pids, victim = self.start(quiet=False)  # without -q mpirun says who died
        os.kill(victim, signal.SIGKILL)
        err = self.finish(proc, pids)
        self.assertNotEqual(proc.returncode, 0, err)
        self.assertRegex(err, r"process rank 2 .* exited on signal 9")


def stalled_sweep(json_path, timeout_s):
    """The command of a small checked sweep on 3 ranks with -T timeout_s, for run_stalled."""
    return [MPIEXEC, "-q", "--oversubscribe", "-np", "3", BIN, "--op", "allreduce", "-b", "8", "-e", "1K",
            "-n", "3", "-c", "-T", str(timeout_s), "--json", json_path, "--force"]


class StallInEveryPhase(TempDirTest):
    """Issue 13: a rank that stalls in any phase, from joining the ranks to finalizing MPI, ends
    the job (within timeout + 10 s: test_deadlines, label speed) with exit 4 and a line
    naming the phase; once the
    heartbeat channel is open, rank 0 also names the stalled rank. COMMBENCH_DEBUG_STALL
    makes rank 1 stop itself (SIGSTOP) at the first guarded step whose name contains the
    given text, so every phase the hook can reach is one the watchdog covers."""

    # Long enough that no healthy step (MPI start-up under ASan on a loaded 2-core VM)
    # outlasts it, short enough to keep 16 phases near 100 s.
    TIMEOUT_S = 4
    # (text of the guarded step, how rank 0 names the stalled rank: its arrival census
    # before the heartbeat channel exists, the heartbeats afterwards)
    PHASES = [("joining the job's ranks", "census"), ("opening the heartbeat channel", "census")] + [
        (phase, "heartbeat") for phase in (
            "creating the auto backend", "exchanging each rank's GPUs", "planning the sweep", "allocating the buffers",
            "probing the topology for the bandwidth model", "opening the result files",
            "gathering each rank's devices", "writing the result headers", "(check)", "(timed batch",
            "(stop agreement)", "writing the results", "finalizing MPI")]
    # Every waiting rank also names itself and the phase (docs/methodology.md, "Timeouts").

    def stall(self, phase):
        return run_stalled(stalled_sweep(self.path("out.json"), self.TIMEOUT_S), phase, self.TIMEOUT_S)

    def test_a_rank_stalled_in_any_phase_is_reported_with_exit_4(self):
        for phase, how_named in self.PHASES:
            with self.subTest(phase=phase):
                rc, err, _, ranks = self.stall(phase)
                self.assertIn("rank 1 stops itself at", err)  # the hook fired in this phase
                self.assertEqual(rc, 4, err)
                self.assertTrue(ranks, "no rank process seen")
                self.assertFalse(any(alive(pid) for pid in ranks), "orphan rank processes")
                waiting = [line for line in err.splitlines() if re.match(
                    r"bench-collectives: timeout: rank [02] \(host [^)]+\): .*" + re.escape(phase) +
                    r".* did not complete within 4 s \(-T/--timeout\)", line)]
                self.assertTrue(waiting, err)
                if how_named == "census":
                    # Before the ranks exchanged names, rank 0 cannot know the host.
                    host = "unknown" if phase.startswith("joining") else "[^)]+"
                    self.assertRegex(err, r"(?m)^bench-collectives: timeout: rank 0 \(host [^)]+\): " + re.escape(phase) +
                                     r" did not complete .*; not arrived at " + re.escape(phase) +
                                     r": rank 1 \(host " + host + r"\)$")
                else:
                    self.assertRegex(err, r"bench-collectives: timeout: rank 0 \(host [^)]+\): .*not responding: "
                                          r"rank 1 \(host [^)]+\) (silent for|never reported)")
                    self.assertNotRegex(err, r"not responding: .*rank [02] \(")
                # The JSON is whole or absent, and no temporary file is left beside it:
                # written by the reporting rank at the end, or, once its header was
                # written, closed by the timeout with complete: false and exit code 4.
                if os.path.exists(self.path("out.json")):
                    with open(self.path("out.json")) as f:
                        doc = json.load(f)
                    finished = phase in ("writing the results", "finalizing MPI")
                    self.assertEqual(doc["complete"], finished)
                    self.assertEqual(doc["summary"]["exit_code"], 0 if finished else 4)
                self.assertEqual([name for name in os.listdir(self.dir) if ".tmp." in name], [])

    def test_a_rank_stopped_before_mpi_init_returns_ends_the_job_with_exit_4(self):
        # MPI start-up gets at least 5 s whatever -T says; every rank waiting in it names
        # itself, its host and the phase.
        rc, err, _, ranks = self.stall("starting MPI")
        self.assertIn("rank 1 stops itself at 'starting MPI (MPI_Init)'", err)
        self.assertEqual(rc, 4, err)
        self.assertTrue(ranks, "no rank process seen")
        self.assertFalse(any(alive(pid) for pid in ranks), "orphan rank processes")
        for rank in (0, 2):
            self.assertRegex(err, rf"(?m)^bench-collectives: timeout: rank {rank} \(host [^)]+\): starting MPI "
                                  r"\(MPI_Init\) did not complete within 5 s \(-T/--timeout 4, raised for this step\)")
        self.assertFalse(os.path.exists(self.path("out.json")))


if __name__ == "__main__":
    unittest.main(verbosity=2)
