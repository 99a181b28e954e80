"""bench-replay on .nsys-rep reports, read through `nsys export --type sqlite` that
bench-replay runs: a stand-in `nsys` on the PATH makes the spawn, its arguments, its
failures and its time limit bench-replay's, while the export itself is the real one nsys
made of tests/fixtures/nsys.
"""
import json
import os
import unittest

from replay_test_support import BIN, FolderCase, run
from test_replay_nsys import classes, report_files


# A stand-in for `nsys` on the PATH: the spawn, its arguments, its failures and its time
# limit are bench-replay's; the export itself is the real one nsys made (FAKE_NSYS_SOURCE).
FAKE_NSYS = """#!/bin/sh
printf '%s\\n' "$*" >> "$FAKE_NSYS_ARGS"
case "$FAKE_NSYS_MODE" in
  old) case "$*" in *--include-blobs*) echo "NVIDIA Nsight Systems"; echo "unrecognised option '--include-blobs=true'"
                 exit 1 ;; esac ;;
  hang) sh -c 'trap "" TERM; exec sleep 300' & echo $! > "$FAKE_NSYS_ARGS.children"
        sleep 300 & echo $! >> "$FAKE_NSYS_ARGS.children"; wait; exit 0 ;;
  fail) echo "Failed to open the report file: it is no Nsight Systems report"; echo second line; exit 1 ;;
esac
for a in "$@"; do case "$a" in --output=*) out="${a#--output=}" ;; esac; done
gzip -dc "$FAKE_NSYS_SOURCE" > "$out"
"""


class NsysRepExport(FolderCase):
    """A .nsys-rep is read through `nsys export --type sqlite`, run by bench-replay."""
    PREFIX = "commbench-replay-nsys-rep-"

    def setUp(self):
        self.bin = os.path.join(self.dir, "bin")
        self.tmp = os.path.join(self.dir, "tmp")
        for folder in (self.bin, self.tmp):
            os.makedirs(folder, exist_ok=True)
        self.rep = os.path.join(self.dir, "rank0.nsys-rep")
        with open(self.rep, "wb") as f:
            f.write(b"\0" * 64)
        for stale in ("nsys-args.txt", "nsys-args.txt.children"):  # an earlier test's stand-in wrote them
            if os.path.exists(os.path.join(self.dir, stale)):
                os.remove(os.path.join(self.dir, stale))

    def with_nsys(self, mode, *args, limit=120):
        """bench-replay with the stand-in nsys on the PATH: (exit code, stdout, stderr, nsys's arguments)."""
        import subprocess
        script = os.path.join(self.bin, "nsys")
        with open(script, "w") as f:
            f.write(FAKE_NSYS)
        os.chmod(script, 0o755)
        arguments = os.path.join(self.dir, "nsys-args.txt")
        env = dict(os.environ, PATH=self.bin + os.pathsep + "/usr/bin:/bin", TMPDIR=self.tmp, FAKE_NSYS_MODE=mode,
                   FAKE_NSYS_ARGS=arguments, FAKE_NSYS_SOURCE=report_files("nsys-llama-ddp")[0])
        p = subprocess.run([os.path.abspath(BIN), *args], capture_output=True, text=True, timeout=limit, env=env)
        calls = open(arguments).read().splitlines() if os.path.exists(arguments) else []
        self.nsys_calls = [line.split() for line in calls]
        return p.returncode, p.stdout, p.stderr, self.nsys_calls[-1] if calls else []

    def test_the_export_is_read_as_its_sqlite(self):
        json_path = os.path.join(self.dir, "rep.json")
        code, _, err, called = self.with_nsys("export", self.rep, "--json", json_path, "--force")
        self.assertEqual(code, 0, err)
        self.assertEqual(called[:5], ["export", "--type", "sqlite", "--include-blobs=true", "--quiet=true"])
        self.assertEqual(called[-1], self.rep)
        direct = os.path.join(self.dir, "direct.json")
        code, _, err = run(report_files("nsys-llama-ddp")[0], "--json", direct, "--force")
        self.assertEqual(code, 0, err)
        with open(json_path) as a, open(direct) as b:
            self.assertEqual(classes(json.load(a)), classes(json.load(b)))
        self.assertEqual(os.listdir(self.tmp), [], "the export's temporary folder is left behind")

    def test_an_nsys_without_payload_export_is_asked_again_without_it(self):
        json_path = os.path.join(self.dir, "old.json")
        code, _, err, called = self.with_nsys("old", self.rep, "--json", json_path, "--force")
        self.assertEqual(code, 0, err)
        self.assertEqual(len(self.nsys_calls), 2, self.nsys_calls)
        self.assertIn("--include-blobs=true", self.nsys_calls[0])
        self.assertEqual(called[:4], ["export", "--type", "sqlite", "--quiet=true"])
        with open(json_path) as f:
            self.assertGreater(json.load(f)["calls_per_rank"], 0)
        self.assertEqual(os.listdir(self.tmp), [])

    def test_a_failed_export_gives_its_first_line(self):
        code, out, err, _ = self.with_nsys("fail", self.rep)
        self.assertEqual(code, 2, out + err)
        self.assertEqual(err.strip(), "bench-replay: error: " + self.rep + ": nsys export failed (exit 1): Failed to "
                         "open the report file: it is no Nsight Systems report")
        self.assertEqual(os.listdir(self.tmp), [])

    def assert_children_ended(self):
        """What the stand-in started, one that ignores SIGTERM included, is gone (or a zombie
        waiting for init) within a moment: SIGKILL was sent, its delivery takes a little."""
        import time
        from process_helpers import alive as running

        with open(os.path.join(self.dir, "nsys-args.txt.children")) as f:
            pids = [int(pid) for pid in f.read().split()]
        deadline = time.monotonic() + 5
        while any(map(running, pids)) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual([pid for pid in pids if running(pid)], [], "left running")

    def test_a_signal_to_bench_replay_stops_the_export_too(self):
        import signal
        p = self.start_hanging_export("0")
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 128 + signal.SIGTERM, out + err)
        self.assertEqual(err.strip(), f"bench-replay: error: {self.rep}: nsys export stopped: interrupted by SIGTERM")
        self.assertEqual(os.listdir(self.tmp), [])
        self.assert_children_ended()

    def start_hanging_export(self, limit, ignore_hangup=False):
        """bench-replay on a stand-in export that never ends, once that has started its children."""
        import signal
        import subprocess
        import time
        script = os.path.join(self.bin, "nsys")
        with open(script, "w") as f:
            f.write(FAKE_NSYS)
        os.chmod(script, 0o755)
        env = dict(os.environ, PATH=self.bin + os.pathsep + "/usr/bin:/bin", TMPDIR=self.tmp, FAKE_NSYS_MODE="hang",
                   FAKE_NSYS_ARGS=os.path.join(self.dir, "nsys-args.txt"))
        p = subprocess.Popen([os.path.abspath(BIN), self.rep, "--export-timeout", limit], env=env, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             preexec_fn=(lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN)) if ignore_hangup else None)
        children = os.path.join(self.dir, "nsys-args.txt.children")
        for _ in range(200):
            if os.path.exists(children) and len(open(children).read().split()) == 2:
                break
            time.sleep(0.05)
        return p

    def test_a_signal_the_process_ignores_does_not_stop_the_export(self):
        """Under nohup SIGHUP is ignored: the export goes on, here to its limit."""
        import signal
        p = self.start_hanging_export("3", ignore_hangup=True)
        p.send_signal(signal.SIGHUP)
        out, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 4, out + err)
        self.assertIn("nsys export ran past 3 s (--export-timeout)", err)
        self.assertEqual(os.listdir(self.tmp), [])

    def test_an_export_that_does_not_end_is_stopped_at_the_limit(self):
        # An export left running would outlast the 60 s the run is given (TimeoutExpired).
        json_path = os.path.join(self.dir, "hang.json")
        code, out, err, _ = self.with_nsys("hang", self.rep, "--export-timeout", "2", "--json", json_path, limit=60)
        self.assertEqual(code, 4, out + err)
        self.assertEqual(len(err.splitlines()), 1, err)
        self.assertIn(self.rep + ": nsys export ran past 2 s (--export-timeout) and was stopped", err)
        self.assertFalse(os.path.exists(json_path), "a result file written after a stopped export")
        self.assertEqual(os.listdir(self.tmp), [])
        self.assert_children_ended()

    def test_without_nsys_on_the_path(self):
        empty = os.path.join(self.dir, "empty")
        os.makedirs(empty, exist_ok=True)
        code, out, err = run_with_path(empty, self.rep)
        self.assertEqual(code, 2, out + err)
        self.assertIn("rank0.nsys-rep: a .nsys-rep is read through `nsys export --type sqlite`, and nsys cannot be "
                      "run here", err)
        self.assertEqual(len(err.splitlines()), 1, err)

    def test_a_bad_limit_is_refused(self):
        code, out, err = run(self.rep, "--export-timeout", "soon")
        self.assertEqual(code, 2, out + err)
        self.assertIn("--export-timeout", err)


def run_with_path(path_value, *args):
    import subprocess
    p = subprocess.run([os.path.abspath(BIN), *args], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, PATH=path_value))
    return p.returncode, p.stdout, p.stderr


if __name__ == "__main__":
    unittest.main()
