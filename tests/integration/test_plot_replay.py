"""scripts/plot on bench-replay's JSON: the job's calls (the real ZeRO-3 fixture) over a real
bench-collectives sweep (results/mpi-host-2core/replay-fabric/sweep.csv). The figure is
inspected: each panel's fabric curve against the sweep's rows, the job's points and the
fabric's figure at their sizes against the JSON, both read here without the reader."""
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
SCRIPTS = os.path.join(ROOT, "scripts")
PLOT = os.path.join(SCRIPTS, "plot")
REPLAY = os.environ.get("COMMBENCH_BENCH_REPLAY", "")
TRACE = os.path.join(ROOT, "tests", "fixtures", "traces", "zero3")
SWEEP = os.path.join(ROOT, "results", "mpi-host-2core", "replay-fabric", "sweep.csv")

sys.path.insert(0, SCRIPTS)
try:
    import matplotlib.text

    from commbench_results.reader import read_result
    from commbench_results.replay_figure import build_replay_figure
    LIBRARIES = ""
except ImportError as e:
    LIBRARIES = (f"{e.name} is not installed for {sys.executable} (scripts/test.sh installs python3-matplotlib and "
                 "python3-pandas)")


def plot(*args):
    p = subprocess.run([sys.executable, PLOT, *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def sweep_points(op, ranks):
    with open(SWEEP, newline="") as f:
        rows = [r for r in csv.DictReader(line for line in f if not line.startswith("#"))
                if r["op"] == op and int(r["ranks"]) == ranks]
    return sorted((float(r["bytes"]), float(r["busbw_gbps"])) for r in rows)


class Replay(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if LIBRARIES or not REPLAY:
            raise unittest.SkipTest(LIBRARIES or "COMMBENCH_BENCH_REPLAY not set")
        cls.dir = tempfile.mkdtemp(prefix="commbench-plot-replay-")
        cls.json = os.path.join(cls.dir, "zero3.json")
        p = subprocess.run([REPLAY, TRACE, "--fabric", SWEEP, "--json", cls.json], capture_output=True, text=True,
                           timeout=120)
        if p.returncode != 0:
            raise AssertionError(f"bench-replay failed ({p.returncode}): {p.stderr}")
        with open(cls.json) as f:
            cls.doc = json.load(f)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_each_collective_is_a_panel_of_the_jobs_points_over_the_fabric_curve(self):
        figure = build_replay_figure([read_result(self.json)], read_result(SWEEP))
        ops = list(dict.fromkeys(c["op"] for c in self.doc["collectives"]))
        self.assertEqual(ops, ["allgather", "reducescatter", "allreduce"])
        self.assertEqual([axes.get_title() for axes in figure.axes], ops)
        for axes, op in zip(figure.axes, ops):
            classes = [c for c in self.doc["collectives"] if c["op"] == op]
            curve = [line for line in axes.lines if line.get_label().startswith("fabric: ")]
            self.assertEqual(len(curve), 1, op)
            self.assertEqual(curve[0].get_label(), "fabric: bench-collectives, 4 ranks")
            self.assertEqual(list(zip(curve[0].get_xdata(), curve[0].get_ydata())), sweep_points(op, 4))
            job, at_fabric = axes.collections
            self.assertEqual([tuple(p) for p in job.get_offsets()], [(c["bytes"], c["busbw_gbps"]) for c in classes])
            self.assertEqual([tuple(p) for p in at_fabric.get_offsets()],
                             [(c["bytes"], c["fabric_busbw_gbps"]) for c in classes])
            # A class of more calls is a larger point.
            counts = [c["calls"] for c in classes]
            if len(set(counts)) > 1:
                sizes = list(job.get_sizes())
                self.assertEqual(sizes.index(max(sizes)), counts.index(max(counts)))
            self.assertEqual(axes.get_xscale(), "log")
        # The verdict under the panels.
        texts = [text.get_text() for text in figure.findobj(matplotlib.text.Text)]
        self.assertTrue(any("of the fabric's busbw" in text for text in texts), texts)

    def test_without_a_sweep_the_fabric_figures_of_the_json_are_drawn(self):
        figure = build_replay_figure([read_result(self.json)])
        for axes in figure.axes:
            self.assertEqual([line for line in axes.lines if line.get_label().startswith("fabric: ")], [])
            self.assertEqual(len(axes.collections), 2)

    def test_the_command_writes_the_picture_and_the_html_report(self):
        png, report = os.path.join(self.dir, "job.png"), os.path.join(self.dir, "job.html")
        self.assertEqual(plot(self.json, "--fabric", SWEEP, "-o", png, "--html", report), (0, "", ""))
        with open(png, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        with open(report) as f:
            text = f.read()
        for heading in ("size", "calls", "busbw (GB/s)", "fabric busbw (GB/s)"):
            self.assertIn(f"<th>{heading}</th>", text)

    def test_bad_uses_are_one_line_and_exit_2(self):
        png = os.path.join(self.dir, "never.png")
        cases = [
            ((SWEEP, "--fabric", self.json), f"{self.json}:1: --fabric draws a bench-replay file's calls over it, "
                                             "not collectives files"),
            ((self.json, "--fabric", self.json), f"{self.json}:1: --fabric needs a bench-collectives result, not a "
                                                 "replay file"),
            ((self.json, self.json), f"{self.json}:1: plot one bench-replay file at a time"),
        ]
        for args, message in cases:
            with self.subTest(args=args):
                code, out, err = plot(*args, "-o", png)
                self.assertEqual(code, 2, err)
                self.assertEqual(len(err.strip().splitlines()), 1, err)
                self.assertTrue(err.startswith("plot: error: " + message), err)
                self.assertFalse(os.path.exists(png))

    def test_a_class_without_a_size_or_a_busbw_is_left_out_and_said(self):
        # A barrier (0 bytes) and a class the traces did not time (no busbw) beside the rest.
        doc = json.loads(json.dumps(self.doc))
        untimed = doc["collectives"][0]
        untimed.update(seconds=None, algbw_gbps=None, busbw_gbps=None, fabric_busbw_gbps=None, fabric_ratio=None)
        doc["collectives"].append(dict(untimed, op="barrier", bytes=0, dtype=""))
        path = os.path.join(self.dir, "partly.json")
        with open(path, "w") as f:
            json.dump(doc, f, indent=1)
        figure = build_replay_figure([read_result(path)])
        drawn = doc["collectives"][1:-1]
        self.assertEqual([axes.get_title() for axes in figure.axes], list(dict.fromkeys(c["op"] for c in drawn)))
        points = [tuple(p) for axes in figure.axes for p in axes.collections[0].get_offsets()]
        self.assertEqual(sorted(points), sorted((c["bytes"], c["busbw_gbps"]) for c in drawn))
        texts = [text.get_text() for text in figure.findobj(matplotlib.text.Text)]
        self.assertTrue(any("not drawn: 2 classes of calls without a size or a busbw" in t for t in texts), texts)

    def test_a_class_the_traces_did_not_time_is_the_fabrics_hollow_point_alone(self):
        doc = json.loads(json.dumps(self.doc))
        untimed = doc["collectives"][0]
        untimed.update(seconds=None, algbw_gbps=None, busbw_gbps=None, fabric_ratio=None)
        path = os.path.join(self.dir, "untimed-with-fabric.json")
        with open(path, "w") as f:
            json.dump(doc, f, indent=1)
        figure = build_replay_figure([read_result(path)])
        axes = figure.axes[[a.get_title() for a in figure.axes].index(untimed["op"])]
        job, at_fabric = axes.collections
        self.assertNotIn((untimed["bytes"], untimed["fabric_busbw_gbps"]), [tuple(p) for p in job.get_offsets()])
        self.assertNotIn(untimed["bytes"], [p[0] for p in job.get_offsets()])
        self.assertIn((untimed["bytes"], untimed["fabric_busbw_gbps"]), [tuple(p) for p in at_fabric.get_offsets()])
        texts = [text.get_text() for text in figure.findobj(matplotlib.text.Text)]
        self.assertTrue(any("a hollow point alone" in t for t in texts), texts)
        # However few the panels, the figure is wide enough for its title and notes.
        self.assertGreaterEqual(figure.get_figwidth(), 10)
        self.assertFalse(any("not drawn:" in t for t in texts), texts)

    def test_a_job_with_nothing_to_draw_is_one_line_and_exit_2(self):
        doc = json.loads(json.dumps(self.doc))
        for c in doc["collectives"]:  # untimed, and read without --fabric
            c.update(seconds=None, algbw_gbps=None, busbw_gbps=None, fabric_seconds=None, fabric_busbw_gbps=None,
                     fabric_ratio=None)
        path = os.path.join(self.dir, "untimed.json")
        with open(path, "w") as f:
            json.dump(doc, f, indent=1)
        png = os.path.join(self.dir, "untimed.png")
        code, out, err = plot(path, "-o", png)
        self.assertEqual(code, 2, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertTrue(err.startswith(f"plot: error: {path}: no class of the job's calls has a size and a busbw"), err)
        self.assertFalse(os.path.exists(png))

    def test_a_broken_replay_file_names_its_line(self):
        png = os.path.join(self.dir, "never.png")
        for index, (change, message) in enumerate([
                (lambda c: c.pop("op"), "a collectives entry needs an 'op' name"),
                (lambda c: c.update(bytes=-1), "'bytes' must be a number, 0 or more, or null"),
                (lambda c: c.update(busbw_gbps="fast"), "'busbw_gbps' must be a number or null")]):
            with self.subTest(message=message):
                doc = json.loads(json.dumps(self.doc))
                change(doc["collectives"][1])
                path = os.path.join(self.dir, f"broken{index}.json")
                with open(path, "w") as f:
                    json.dump(doc, f, indent=1)
                with open(path) as f:
                    lines = f.read().splitlines()
                array = lines.index(' "collectives": [')
                second = [n for n in range(array + 1, len(lines)) if lines[n] == "  {"][1] + 1  # 1-based
                code, out, err = plot(path, "-o", png)
                self.assertEqual(code, 2, err)
                self.assertEqual(err.strip(), f"plot: error: {path}:{second}: {message}")
                self.assertFalse(os.path.exists(png))


if __name__ == "__main__":
    unittest.main(verbosity=2)
