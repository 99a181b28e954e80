"""The processes of a test's mpirun, read from /proc, and a run with one rank stalled on
purpose: the timeout and interruption tests check that the job ends, says who stalled,
and that no rank outlives it."""
import os
import subprocess
import time


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def children_of(pid):
    kids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                kids.append(int(entry))
    return kids


def run_stalled(cmd, phase, timeout_s):
    """Runs an mpirun command with rank 1 told to stop itself (COMMBENCH_DEBUG_STALL) at the
    first watchdog-guarded step whose name contains `phase`; returns the exit code, stderr,
    the wall time and the rank processes seen, after giving those up to 10 s to end."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               COMMBENCH_DEBUG_STALL="1:" + phase)
    started = time.time()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    ranks = []
    while not ranks and proc.poll() is None and time.time() - started < 10:
        time.sleep(0.05)
        ranks = children_of(proc.pid)
    _, err = proc.communicate(timeout=timeout_s + 60)
    elapsed = time.time() - started
    deadline = time.time() + 10
    while any(alive(pid) for pid in ranks) and time.time() < deadline:
        time.sleep(0.1)
    return proc.returncode, err, elapsed, ranks
