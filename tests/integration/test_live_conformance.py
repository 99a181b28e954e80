"""The conformance suite live: the real frameworks record their step again here
(tests/fixtures/traces/record-traces.sh into a temporary folder, nothing committed) and
bench-replay holds each new trace against bench-patterns' step for the same model and
settings, call for call. It runs wherever a Python environment with torch and deepspeed is
named by COMMBENCH_TRACE_VENV (ctest label `live`) and skips, saying why, elsewhere: CI
checks the committed recordings instead (test_replay_schedule.AgainstTheModel).

COMMBENCH_LIVE_CASES (comma-separated) picks the cases; the default is one per framework
and shape.
"""
import os
import shutil
import subprocess
import tempfile
import unittest

from replay_test_support import HERE, PATTERNS, hybrid_job_calls, hybrid_model_calls, model_of, pattern_flags, run

VENV = os.environ.get("COMMBENCH_TRACE_VENV", "")
RECORD = os.path.join(HERE, "..", "fixtures", "traces", "record-traces.sh")
DEFAULT_CASES = "llama-ddp,llama-fsdp2,llama-fsdp1,llama-zero3,llama-zero3-3ranks,llama-tied-zero3,llama-hsdp"


def frameworks_missing():
    """Why the live suite cannot run here, or '' when it can."""
    if not VENV:
        return "COMMBENCH_TRACE_VENV is not set (a venv with torch and deepspeed)"
    python = os.path.join(VENV, "bin", "python")
    if not os.access(python, os.X_OK):
        return f"COMMBENCH_TRACE_VENV={VENV} has no bin/python"
    probe = subprocess.run([python, "-c", "import torch, deepspeed"], capture_output=True, text=True, timeout=300)
    if probe.returncode != 0:
        return f"{python} cannot import torch and deepspeed"
    return ""


class Live(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        why = frameworks_missing()
        if why:
            raise unittest.SkipTest(why)
        cls.dir = tempfile.mkdtemp(prefix="commbench-live-")
        cls.cases = os.environ.get("COMMBENCH_LIVE_CASES", DEFAULT_CASES).split(",")
        p = subprocess.run(["bash", RECORD, "--venv", VENV, "--out", cls.dir, "--cases", ",".join(cls.cases)],
                           capture_output=True, text=True, timeout=3000)
        if p.returncode != 0:
            shutil.rmtree(cls.dir, ignore_errors=True)
            raise AssertionError(f"record-traces.sh: exit {p.returncode}: {p.stderr[-2000:]}")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_every_recorded_step_is_the_models_call_for_call(self):
        for case in self.cases:
            with self.subTest(case=case):
                folder = os.path.join(self.dir, case)
                if os.path.exists(os.path.join(folder, "collectives-rank0.json.gz")):
                    # A case of several groups: the flight recorder's groups, against the
                    # model's on 2 nodes of 2 ranks (test_replay_schedule's hybrid test).
                    self.assertTrue(PATTERNS, "COMMBENCH_BENCH_PATTERNS is not set")
                    modelled, err = hybrid_model_calls(case, folder, os.path.join(self.dir, case + "-model.jsonl"))
                    self.assertIsNotNone(modelled, err)
                    self.assertEqual(hybrid_job_calls(folder)[0], modelled)
                    continue
                code, out, err = run(folder, *pattern_flags(case, folder), *model_of(case))
                self.assertEqual(code, 0, err)
                self.assertIn("the job's calls and the model's are alike, call for call", out)


if __name__ == "__main__":
    unittest.main()
