"""The installable package as a user meets it: CPack's .deb of this build, unpacked into a
fresh root (dpkg-deb -x, no root rights needed), then every command's --version and real
runs from the installed tree, in a folder outside the repository."""
import csv
import glob
import os
import shutil
import subprocess
import tempfile
import unittest

BUILD = os.environ.get("COMMBENCH_BUILD_DIR", "build")
MPIEXEC = os.environ.get("COMMBENCH_MPIEXEC", "")
HAVE_MPI = os.environ.get("COMMBENCH_HAVE_MPI", "1") == "1"
COMMANDS = ("bench-collectives", "bench-topology", "bench-patterns", "bench-replay", "bench-p2p", "bench-validate")
TOOLS = ("commbench-plot", "commbench-compare")


def has_python_module(module):
    """Whether an interpreter the tools run under (theirs or Debian's) has `module`."""
    for python in ("python3", "/usr/bin/python3"):
        if shutil.which(python) and subprocess.run([python, "-c", f"import {module}"],
                                                   capture_output=True).returncode == 0:
            return True
    return False


@unittest.skipUnless(shutil.which("cpack") and shutil.which("dpkg-deb") and shutil.which("dpkg-shlibdeps"),
                     "needs cpack, dpkg-deb and dpkg-shlibdeps (dpkg-dev)")
class Package(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="commbench-package-")
        out = os.path.join(cls.dir, "out")
        p = subprocess.run(["cpack", "-G", "DEB", "-B", out], cwd=BUILD, capture_output=True, text=True, timeout=600)
        if p.returncode != 0:
            raise AssertionError(f"cpack failed ({p.returncode}):\n{p.stdout}{p.stderr}")
        debs = glob.glob(os.path.join(out, "commbench_*.deb"))
        if len(debs) != 1:
            raise AssertionError(f"expected one .deb in {out}: {debs}")
        cls.deb = debs[0]
        cls.root = os.path.join(cls.dir, "root")
        subprocess.run(["dpkg-deb", "-x", cls.deb, cls.root], check=True)
        cls.bin = os.path.join(cls.root, "usr", "bin")
        # Outside the repository: nothing may be found through the source or build tree.
        cls.work = os.path.join(cls.dir, "work")
        os.mkdir(cls.work)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def run_installed(self, *args, timeout=120):
        env = dict(os.environ, PATH=self.bin + os.pathsep + os.environ.get("PATH", ""),
                   OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        return subprocess.run(list(args), cwd=self.work, capture_output=True, text=True, timeout=timeout, env=env)

    def control(self, field):
        return subprocess.run(["dpkg-deb", "-f", self.deb, field], capture_output=True, text=True,
                              check=True).stdout.strip()

    def test_the_control_file_names_the_package_and_its_dependencies(self):
        self.assertEqual(self.control("Package"), "commbench")
        depends = [d.strip().split()[0] for d in self.control("Depends").split(",")]
        self.assertIn("python3", depends)
        self.assertIn("libc6", depends)  # found by dpkg-shlibdeps from the binaries

    def test_every_command_says_its_version_from_the_installed_tree(self):
        version = self.control("Version")
        for command in COMMANDS:
            with self.subTest(command=command):
                path = os.path.join(self.bin, command)
                self.assertTrue(os.access(path, os.X_OK), path)
                p = self.run_installed(command, "--version")
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertTrue(p.stdout.startswith(f"{command} {version} (commit "), p.stdout)

    @unittest.skipUnless(HAVE_MPI, "built without MPI: the only backend, nccl, needs a GPU")
    def test_a_real_sweep_then_the_installed_tools_read_it(self):
        launch = [MPIEXEC, "-q", "--oversubscribe", "-np", "2"] if MPIEXEC else []
        p = self.run_installed(*launch, "bench-collectives", "--backend", "mpi", "--op", "allreduce", "-b", "8",
                               "-e", "1K", "-n", "2", "--csv", "sweep.csv", "--json", "sweep.json")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(os.path.join(self.work, "sweep.csv"), newline="") as f:
            rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
        self.assertEqual([int(r["bytes"]) for r in rows], [8 << k for k in range(8)])
        if not has_python_module("pandas"):
            self.skipTest("pandas is missing: commbench-compare cannot run")
        p = self.run_installed("commbench-compare", "sweep.csv", "sweep.csv")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("allreduce", p.stdout)
        if not has_python_module("matplotlib"):
            self.skipTest("matplotlib is missing: commbench-plot cannot run")
        p = self.run_installed("commbench-plot", "sweep.csv", "-o", "sweep.png")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(os.path.join(self.work, "sweep.png"), "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def test_the_tools_are_links_to_the_shared_folder(self):
        for tool in TOOLS:
            with self.subTest(tool=tool):
                link = os.path.join(self.bin, tool)
                self.assertTrue(os.path.islink(link), link)
                self.assertTrue(os.readlink(link).startswith("../share/commbench/tools/"), os.readlink(link))
                self.assertTrue(os.path.isfile(os.path.realpath(link)), os.path.realpath(link))

    def test_the_job_files_and_the_manual_are_installed(self):
        slurm = os.path.join(self.root, "usr", "share", "commbench", "slurm")
        for job in ("validate.sbatch", "soak.sbatch", "bench-collectives.sbatch", "bench-topology.sbatch",
                    "profile.sbatch", "healthcheck.sh"):
            with self.subTest(job=job):
                path = os.path.join(slurm, job)
                self.assertTrue(os.access(path, os.X_OK), path)
                self.assertEqual(subprocess.run(["bash", "-n", path]).returncode, 0, path)
        self.assertTrue(os.path.isfile(os.path.join(slurm, "acceptance.txt")))
        doc = os.path.join(self.root, "usr", "share", "doc", "commbench")
        for page in ("README.md", "output-format.md", "collectives.md", os.path.join("schema", "records.schema.json")):
            with self.subTest(page=page):
                self.assertTrue(os.path.isfile(os.path.join(doc, page)), page)

    def test_no_installed_binary_points_into_the_build_tree(self):
        for command in COMMANDS:
            with self.subTest(command=command):
                dynamic = subprocess.run(["readelf", "-d", os.path.join(self.bin, command)], capture_output=True,
                                         text=True).stdout
                self.assertNotIn(os.path.abspath(BUILD), dynamic)


if __name__ == "__main__":
    unittest.main()
