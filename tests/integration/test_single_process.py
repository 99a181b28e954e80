"""The build without MPI (what runs on a GPU machine without MPI): one process, the nccl
backend only. Runs the binary directly; ctest registers it in that configuration."""
import os
import subprocess
import unittest

BIN = os.environ.get("COMMBENCH_BENCH_COLLECTIVES", "build-nompi/bench/bench-collectives")


def run(*args):
    p = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def has_gpu():
    try:
        return subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=60).returncode == 0
    except OSError:
        return False


class SingleProcessBuild(unittest.TestCase):
    def test_version_lists_no_mpi_backend(self):
        rc, out, err = run("--version")
        self.assertEqual(rc, 0, err)
        backends = [l for l in out.splitlines() if l.startswith("backends: ")][0]
        self.assertNotIn("mpi", backends)

    def test_mpi_backend_is_refused(self):
        rc, out, err = run("--backend", "mpi", "-b", "8", "-e", "8")
        self.assertEqual(rc, 2, err)
        self.assertRegex(err.strip(), r"^bench-collectives: error: --backend mpi: this build has no MPI backend")

    def test_without_a_gpu_auto_and_nccl_say_so(self):
        if has_gpu():
            self.skipTest("this machine has a GPU: tests/gpu covers it")
        rc, out, err = run("--version")
        expect_nccl = "nccl" in out
        for backend in ("auto", "nccl"):
            with self.subTest(backend=backend):
                rc, out, err = run("--backend", backend, "-g", "2", "-b", "8", "-e", "8")
                lines = err.strip().splitlines()
                self.assertEqual(len(lines), 1, err)
                if expect_nccl:
                    self.assertEqual(rc, 3, err)
                    self.assertRegex(lines[0], r"^bench-collectives: error: no CUDA device on host \S+$")
                else:
                    self.assertEqual(rc, 2, err)

    def test_usage_errors_need_no_mpi(self):
        rc, out, err = run("-g", "0")
        self.assertEqual(rc, 2)
        self.assertEqual(err.strip(), "bench-collectives: error: -g/--gpus-per-process: must be at least 1 (got 0)")


if __name__ == "__main__":
    unittest.main(verbosity=2)
