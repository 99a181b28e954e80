"""The scripts' own decisions, through the seam where they read the machine: how many
ranks the main job (scripts/run.sh) starts on machines with 0, 1 and 8 GPUs. A stand-in
`nvidia-smi` first on PATH plays the GPUs; the real lib.sh functions run in bash. And
scripts/run.sh itself: what it builds, where it keeps each run, what it says to try next."""
import gzip
import os
import re
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
LIB = os.path.join(HERE, "..", "..", "scripts", "lib.sh")
RUN = os.path.join(ROOT, "scripts", "run.sh")
README = os.path.join(ROOT, "README.md")
BUILD_DIR = os.environ.get("COMMBENCH_BUILD_DIR", "")


def build_has_mpi(build_dir):
    """Whether the build's programs are MPI programs: run.sh starts them under mpirun, where
    a build without MPI would start each rank as a job of its own."""
    try:
        with open(os.path.join(build_dir, "CMakeCache.txt")) as f:
            return "COMMBENCH_WITH_MPI:STRING=OFF" not in f.read()
    except OSError:
        return False
GPU_SESSION = os.path.join(HERE, "..", "..", "scripts", "gpu-session.sh")
TOPOLOGY = os.environ.get("COMMBENCH_BENCH_TOPOLOGY", "")


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
        # nvidia-smi installed but no driver loaded: it fails (first on PATH, so a real one
        # on a GPU host does not answer instead).
        with open(os.path.join(self.bin, "nvidia-smi"), "w") as f:
            f.write("#!/bin/sh\necho 'NVIDIA-SMI has failed because it could not communicate with the driver' >&2\n"
                    "exit 9\n")
        self.assertEqual(self.ranks()[:2], (0, "4"))

    def test_commbench_np_wins_and_is_checked(self):
        self.fake_gpus(8)
        self.assertEqual(self.ranks("3")[:2], (0, "3"))
        for bad in ("0", "x", "-2", "1.5"):
            rc, out, err = self.ranks(bad)
            self.assertEqual(rc, 2, bad)
            self.assertIn(f"COMMBENCH_NP='{bad}' is not a positive whole number", err)


def readme_table_examples():
    """The Example column of README.md's table of commands."""
    with open(README) as f:
        rows = [line for line in f if line.startswith("| `bench-")]
    return [re.findall(r"`([^`]*)`", row.split("|")[3])[0] for row in rows]


def without_launcher(command):
    """A command without its `mpirun [flags] -np N` or `srun [flags]` in front."""
    return re.sub(r"^(mpirun( --[a-z-]+)* -np \d+|srun( -\S+( \d+)?)*) ", "", command)


class RunScript(unittest.TestCase):
    """scripts/run.sh end to end on the built programs: stand-ins for cmake (the build is
    ctest's; the stand-in records what run.sh asks to build) and dpkg-query (every package
    installed), the real mpirun, bench-topology, bench-collectives and scripts/plot."""

    def test_it_builds_every_program_the_readme_names(self):
        with open(RUN) as f:
            built = set(re.search(r"COMMBENCH_PROGRAMS=\(([^)]*)\)", f.read()).group(1).split())
        named = {os.path.basename(without_launcher(example).split()[0]) for example in readme_table_examples()}
        self.assertEqual(len(named), 7, named)
        self.assertLessEqual(named, built)

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="commbench-run-sh-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.bin = os.path.join(self.dir, "bin")
        os.mkdir(self.bin)
        self.cmake_log = os.path.join(self.dir, "cmake.log")
        for name, body in (("cmake", f'printf "%s\\n" "$*" >> "{self.cmake_log}"\n'),
                           ("dpkg-query", "printf 'install ok installed'\n")):
            path = os.path.join(self.bin, name)
            with open(path, "w") as f:
                f.write("#!/bin/sh\n" + body)
            os.chmod(path, stat.S_IRWXU)
        self.results = os.path.join(self.dir, "results")

    def run_script(self):
        env = dict(os.environ, PATH=self.bin + os.pathsep + "/usr/bin" + os.pathsep + "/bin",
                   COMMBENCH_BUILD=BUILD_DIR, COMMBENCH_RESULTS=self.results, COMMBENCH_NP="2")
        p = subprocess.run(["bash", RUN, "-b", "8", "-e", "1K", "--op", "allreduce", "-n", "2", "-w", "0"],
                           capture_output=True, text=True, env=env, timeout=240)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        return p

    def runs(self):
        return sorted(name for name in os.listdir(self.results) if name != "latest")

    @unittest.skipUnless(BUILD_DIR and build_has_mpi(BUILD_DIR),
                         "COMMBENCH_BUILD_DIR names no build with MPI (run.sh's programs run under mpirun)")
    def test_each_run_keeps_its_folder_and_says_what_to_try_next(self):
        first = self.run_script()
        with open(self.cmake_log) as f:
            build_lines = [line.split() for line in f if line.startswith("--build")]
        self.assertEqual(len(build_lines), 1, build_lines)
        targets = build_lines[0][build_lines[0].index("--target") + 1:]
        self.assertEqual(sorted(targets), sorted(["bench-collectives", "bench-topology", "bench-patterns", "bench-replay",
                                                  "bench-p2p", "bench-validate", "bench-groups"]))
        [run] = self.runs()
        self.assertRegex(run, r"^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\dZ$")
        self.assertEqual(os.readlink(os.path.join(self.results, "latest")), run)
        files = {"collectives.csv", "collectives.json", "collectives.png", "topology.json", "topology-links.csv"}
        self.assertLessEqual(files, set(os.listdir(os.path.join(self.results, run))))
        with open(os.path.join(self.results, run, "collectives.csv")) as f:
            first_csv = f.read()

        self.run_script()
        runs = self.runs()
        self.assertEqual(len(runs), 2, runs)
        self.assertEqual(os.readlink(os.path.join(self.results, "latest")), runs[1])
        with open(os.path.join(self.results, run, "collectives.csv")) as f:
            self.assertEqual(f.read(), first_csv, "the second run changed the first run's files")

        # What to try next: commands of README's table, started as this machine starts them.
        advice = first.stderr[first.stderr.index("what to try next"):].splitlines()[1:]
        prefix = "mpirun --allow-run-as-root" if os.getuid() == 0 else "mpirun"
        build = os.path.relpath(BUILD_DIR, ROOT) if BUILD_DIR.startswith(ROOT + os.sep) else BUILD_DIR
        table = {without_launcher(example) for example in readme_table_examples()}
        commands = [line.strip() for line in advice if line.startswith("  ")]
        launched = [c for c in commands if c.startswith("mpirun")]
        self.assertGreaterEqual(len(launched), 3, advice)
        for command in launched:
            self.assertTrue(command.startswith(prefix + " --oversubscribe -np 2 "), command)
            self.assertIn(without_launcher(command).replace(build + "/", "build/"), table)
        self.assertIn(f"scripts/plot {self.results}/latest/collectives.json -o sweep.png", commands)


class GpuSessionStaging(unittest.TestCase):
    """What `gpu-session.sh stage` carries to a GPU machine without a package registry:
    every library the binaries load except the C/C++ runtime and the GPU stack."""

    @unittest.skipUnless(TOPOLOGY, "COMMBENCH_BENCH_TOPOLOGY names no binary")
    def test_carried_libraries(self):
        dest = tempfile.mkdtemp(prefix="commbench-carried-")
        try:
            script = (f"source <(sed -n '/^collect_libraries()/,/^}}/p' '{GPU_SESSION}'); "
                      f"collect_libraries '{dest}' '{TOPOLOGY}'")
            p = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            carried = set(os.listdir(dest))
            needed = subprocess.run(["ldd", TOPOLOGY], capture_output=True, text=True, check=True).stdout
            self.assertIn("libpugixml.so.1", carried)  # not on a bare image, needed by the XML reader
            if "libfmt" in needed:
                self.assertTrue(any(name.startswith("libfmt.so") for name in carried), carried)
            for runtime in ("libc.so.6", "libstdc++.so.6", "libm.so.6", "libgcc_s.so.1"):
                self.assertNotIn(runtime, carried)
            self.assertFalse(any(name.startswith(("libcuda", "libnccl", "libnvidia")) for name in carried), carried)
        finally:
            shutil.rmtree(dest, ignore_errors=True)

    def test_every_program_the_run_step_starts_is_built_and_copied_by_the_stage_step(self):
        with open(GPU_SESSION) as f:
            text = f.read()
        stage = text[text.index("\n  stage)"):text.index("\n  run)")]
        run = text[text.index("\n  run)"):]
        folders = {"lib", "nsys-lib"}  # the carried libraries: the programs', and nsys's own
        started = set(re.findall(r'"\$stage/([a-z0-9-]+)"', run)) - folders
        started.add("bench-collectives")  # started as "$bin"
        built = set(re.search(r"commbench_build --target ([^\n]*\n[^\n]*)", stage).group(1).replace("\\", " ").split())
        copied = set(re.findall(r"/(?:bench|tests/gpu)/([a-z0-9-]+)\"", stage))
        self.assertTrue(started, "no program found in the run step")
        self.assertLessEqual(started, built, "run starts programs the stage step does not build")
        self.assertLessEqual(started, copied, "run starts programs the stage step does not copy")
        for folder in folders & set(re.findall(r'"\$stage/([a-z0-9-]+)"', run)):
            self.assertIn(f'"$unpacked/{folder}"', stage, f"run uses {folder}, which the stage step does not fill")
        # What the stage step packs is what the run step unpacks, where it looks for it.
        self.assertIn('tar czf "$stage/stage.tgz" -C "$unpacked" .', stage)
        self.assertIn('tar xzf "$stage/stage.tgz" -C "$stage"', run)


class GpuSessionChecks(unittest.TestCase):
    """The run step's own verdicts, with the script's functions sourced as it defines them:
    a stalled step is exit 4 (not timeout's 124), and the Nsight Systems check reads the
    GPU operations of the captured range from a real report of a GPU run."""

    PROFILE = os.path.join(HERE, "..", "..", "results", "gpu", "h100-80gb-hbm3", "2026-11-26-3e21210",
                           "nsys-nvtx_gpu_proj_sum.csv")

    def bash(self, commands):
        script = (f"source <(sed -n '/^within() {{/,/^}}/p; /^gpu_ops_in_range() {{/,/^}}/p' '{GPU_SESSION}'); "
                  + commands)
        return subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)

    def test_a_stalled_step_is_exit_4_and_others_keep_their_code(self):
        p = self.bash("within 1 sleep 30; echo stalled=$?; within 5 sh -c 'exit 3'; echo failed=$?; "
                      "within 5 true; echo fine=$?")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.split(), ["stalled=4", "failed=3", "fine=0"])

    def test_gpu_operations_of_the_captured_range(self):
        if not os.path.exists(self.PROFILE):
            self.skipTest("no committed Nsight Systems report at " + self.PROFILE)
        p = self.bash(f"gpu_ops_in_range '{self.PROFILE}' 'allreduce 64MiB float sum out-of-place (capture range)'; "
                      f"gpu_ops_in_range '{self.PROFILE}' 'no such range'; gpu_ops_in_range /nonexistent x")
        self.assertEqual(p.stdout.split(), ["189", "0", "0"], p.stdout + p.stderr)


RECORD_GPU_TRACES = os.path.join(HERE, "..", "fixtures", "gpu", "record-gpu-traces.sh")
TRIM_REPORT = os.path.join(HERE, "..", "fixtures", "nsys", "trim_report.py")
NSYS_REPORT = os.path.join(HERE, "..", "fixtures", "nsys", "nsys-llama-ddp", "rank0.sqlite.gz")


class GpuTraceRecording(unittest.TestCase):
    """tests/fixtures/gpu/record-gpu-traces.sh refuses what it cannot run, in one line, before
    it writes anything; trim_report.py keeps what bench-replay reads of a CUDA report."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="commbench-gpu-traces-")
        self.addCleanup(shutil.rmtree, self.dir, True)

    def test_refusals_are_one_line_with_their_exit_code_and_write_nothing(self):
        out = os.path.join(self.dir, "out")
        no_torch = os.path.join(self.dir, "python")  # a Python whose torch sees no GPU
        with open(no_torch, "w") as f:
            f.write("#!/bin/sh\nexit 1\n")
        os.chmod(no_torch, 0o755)
        for args, code, message in (
                ([], 2, "--out DIR is required"),
                (["--out", out, "--frobnicate"], 2, "unknown argument: --frobnicate"),
                (["--out", out, "--nsys", "/nonexistent/nsys"], 2, "--nsys /nonexistent/nsys: not an executable"),
                (["--out", out, "--nsys", "none", "--ranks", "two"], 2, "--ranks: 'two' is not a GPU count"),
                (["--out", out, "--nsys", "none", "--ranks", "1", "--python", no_torch], 3,
                 f"--python {no_torch}: cannot import torch, or torch sees no GPU")):
            with self.subTest(args=args):
                p = subprocess.run(["bash", RECORD_GPU_TRACES, *args], capture_output=True, text=True, timeout=60)
                self.assertEqual(p.returncode, code, p.stderr)
                self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
                self.assertIn("record-gpu-traces.sh: " + message, p.stderr)
                self.assertFalse(os.path.exists(out))

    def test_trim_keeps_a_cuda_reports_kernels_gpus_and_nvtx_tables(self):
        report = os.path.join(self.dir, "rank0.sqlite")
        with gzip.open(NSYS_REPORT, "rb") as src, open(report, "wb") as dst:
            shutil.copyfileobj(src, dst)
        db = sqlite3.connect(report)
        for table in ("CUPTI_ACTIVITY_KIND_KERNEL", "TARGET_INFO_GPU", "NVTX_PAYLOAD_SCHEMAS", "OSRT_API"):
            db.execute(f"CREATE TABLE {table} (id INTEGER, value TEXT)")
            db.execute(f"INSERT INTO {table} VALUES (1, '{table}')")
        nvtx_rows = db.execute("SELECT count(*) FROM NVTX_EVENTS").fetchone()[0]
        db.commit()
        db.close()
        trimmed = os.path.join(self.dir, "trimmed.sqlite.gz")
        p = subprocess.run([sys.executable, TRIM_REPORT, report, trimmed], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        plain = os.path.join(self.dir, "trimmed.sqlite")
        with gzip.open(trimmed, "rb") as src, open(plain, "wb") as dst:
            shutil.copyfileobj(src, dst)
        db = sqlite3.connect(plain)
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        for table in ("CUPTI_ACTIVITY_KIND_KERNEL", "TARGET_INFO_GPU", "NVTX_PAYLOAD_SCHEMAS"):
            self.assertIn(table, tables)
            self.assertEqual(db.execute(f"SELECT value FROM {table}").fetchall(), [(table,)])
        self.assertNotIn("OSRT_API", tables)
        self.assertEqual(db.execute("SELECT count(*) FROM NVTX_EVENTS").fetchone()[0], nvtx_rows)
        db.close()


if __name__ == "__main__":
    unittest.main()
