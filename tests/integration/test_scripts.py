"""The scripts' own decisions, through the seam where they read the machine: how many
ranks the main job (scripts/run.sh) starts on machines with 0, 1 and 8 GPUs. A stand-in
`nvidia-smi` first on PATH plays the GPUs; the real lib.sh functions run in bash."""
import os
import shutil
import stat
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
LIB = os.path.join(HERE, "..", "..", "scripts", "lib.sh")


class DefaultRanks(unittest.TestCase):
    def setUp(self):
        self.bin = tempfile.mkdtemp(prefix="commbench-fake-gpus-")

    def tearDown(self):
        shutil.rmtree(self.bin, ignore_errors=True)

    def fake_gpus(self, count):
        script = os.path.join(self.bin, "nvidia-smi")
        lines = "".join(f"echo 'GPU {i}: NVIDIA H100 80GB HBM3 (UUID: GPU-{i:08d})'\n" for i in range(count))
        with open(script, "w") as f:
            f.write("#!/bin/sh\n[ \"$1\" = -L ] || exit 9\n" + lines)
        os.chmod(script, stat.S_IRWXU)

    def ranks(self, np=None):
        env = dict(os.environ, PATH=self.bin + os.pathsep + "/usr/bin" + os.pathsep + "/bin")
        env.pop("COMMBENCH_NP", None)
        if np is not None:
            env["COMMBENCH_NP"] = np
        p = subprocess.run(["bash", "-c", f"set -euo pipefail; source '{LIB}'; commbench_default_ranks"],
                           capture_output=True, text=True, env=env, timeout=30)
        return p.returncode, p.stdout.strip(), p.stderr

    def test_one_rank_per_gpu(self):
        for gpus, expected in ((1, "1"), (8, "8")):
            self.fake_gpus(gpus)
            self.assertEqual(self.ranks(), (0, expected, ""), gpus)

    def test_four_host_ranks_without_gpus(self):
        self.fake_gpus(0)  # a driver that lists nothing
        self.assertEqual(self.ranks()[:2], (0, "4"))
        os.remove(os.path.join(self.bin, "nvidia-smi"))  # no driver at all
        self.assertEqual(self.ranks()[:2], (0, "4"))

    def test_commbench_np_wins_and_is_checked(self):
        self.fake_gpus(8)
        self.assertEqual(self.ranks("3")[:2], (0, "3"))
        for bad in ("0", "x", "-2", "1.5"):
            rc, out, err = self.ranks(bad)
            self.assertEqual(rc, 2, bad)
            self.assertIn(f"COMMBENCH_NP='{bad}' is not a positive whole number", err)


if __name__ == "__main__":
    unittest.main()
