"""scripts/plot on bench-patterns' JSON of real runs (2 MPI ranks, DDP and FSDP): the
stacked bars of each run's step, the exposed time per collective type, the HTML table and
the PNG.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from test_plots import CHROMIUM, MPIEXEC, PATTERNS_BIN, PLOT, SCRIPTS, read_text, script

sys.path.insert(0, SCRIPTS)
try:
    import matplotlib.image

    from commbench_results.patterns_figure import build_patterns_figure, step_parts
    from commbench_results.reader import read_result
    LIBRARIES = ""
except ImportError as e:
    LIBRARIES = (f"{e.name} is not installed for {sys.executable} (scripts/test.sh installs python3-matplotlib and "
                 "python3-pandas)")


@unittest.skipUnless(CHROMIUM, "no chromium on PATH (scripts/test.sh installs the Debian package chromium)")
class Patterns(unittest.TestCase):
    """bench-patterns' JSON as stacked bars: one bar per run, its parts adding up to the
    measured step, and the exposed time per collective type beside it."""

    @classmethod
    def setUpClass(cls):
        if LIBRARIES or not (PATTERNS_BIN and MPIEXEC):
            raise unittest.SkipTest(LIBRARIES or "COMMBENCH_BENCH_PATTERNS or COMMBENCH_MPIEXEC not set")
        cls.dir = tempfile.mkdtemp(prefix="commbench-plots-patterns-")
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        cls.files = []
        for pattern in ("ddp", "fsdp"):
            path = os.path.join(cls.dir, pattern + ".json")
            p = subprocess.run([MPIEXEC, "-q", "--oversubscribe", "-np", "2", PATTERNS_BIN, "--backend", "mpi",
                                "--pattern", pattern, "--params", "5M", "--layers", "4", "--hidden", "256", "--ffn",
                                "1024", "--seq", "128", "--compute-ms", "2", "-n", "2", "--json", path],
                               capture_output=True, text=True, timeout=300, env=env)
            if p.returncode != 0:
                raise AssertionError(f"bench-patterns failed ({p.returncode}): {p.stderr}")
            cls.files.append(path)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_one_stacked_bar_per_run_adding_up_to_its_step(self):
        results = [read_result(path) for path in self.files]
        self.assertEqual([r.kind for r in results], ["patterns", "patterns"])
        figure = build_patterns_figure(results)
        step_axes, type_axes = figure.axes[:2]
        self.assertEqual([label.get_text() for label in step_axes.get_xticklabels()], ["ddp", "fsdp"])
        bars = [patch for patch in step_axes.patches]
        self.assertEqual(len(bars), 2 * 4)  # four parts per run
        for index, path in enumerate(self.files):
            with open(path) as f:
                step = json.load(f)["mean_step"]
            stacked = sum(bar.get_height() for bar in bars[index::2])
            self.assertAlmostEqual(stacked, step["step_seconds"] * 1e3, places=6)
            parts = step_parts(results[index].table.iloc[0])
            self.assertAlmostEqual(parts["compute_alone"] + parts["overlapped"], step["compute_seconds"], places=9)
        # DDP exposes allreduces, FSDP all-gathers and reduce-scatters.
        self.assertEqual({label.get_text() for label in type_axes.get_yticklabels()},
                         {"allreduce/data", "allgather/data", "reducescatter/data"})

    def test_html_report_tabulates_the_step_in_milliseconds(self):
        report, png = os.path.join(self.dir, "patterns.html"), os.path.join(self.dir, "for-html.png")
        self.assertEqual(script(PLOT, *self.files, "-o", png, "--html", report), (0, "", ""))
        text = read_text(report)
        self.assertIn("<svg", text)
        for heading in ("step (ms)", "exposed (ms)", "exposed allreduce/data (ms)", "exposed allgather/data (ms)"):
            self.assertIn(f"<th>{heading}</th>", text)
        with open(self.files[0]) as f:
            step_ms = json.load(f)["mean_step"]["step_seconds"] * 1e3
        self.assertIn(f"<td>{step_ms:.4g}</td>", text)

    def test_png_is_written(self):
        png = os.path.join(self.dir, "patterns.png")
        self.assertEqual(script(PLOT, *self.files, "-o", png), (0, "", ""))
        with open(png, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        image = matplotlib.image.imread(png)
        # The exposed part's orange covers a real area.
        orange = (abs(image[:, :, 0] - 0.867) < 0.03) & (abs(image[:, :, 1] - 0.518) < 0.03) & \
                 (abs(image[:, :, 2] - 0.322) < 0.03)
        self.assertGreater(orange.sum(), 1000)


if __name__ == "__main__":
    unittest.main()
