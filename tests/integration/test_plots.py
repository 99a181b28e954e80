"""scripts/plot and scripts/compare on files the real bench-collectives writes (2 and 3 MPI
ranks, a small sweep), and the HTML report in a real headless Chromium.

The figure is inspected, not only saved: its lines, their x data, the log2 axis, the dashed
theoretical line in the line's colour. compare's exit codes and messages are asserted on a
real run and on copies with an injected 20 % drop or a broken line.
"""
import csv
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "..", "..", "scripts")
PLOT = os.path.join(SCRIPTS, "plot")
COMPARE = os.path.join(SCRIPTS, "compare")
BIN = os.environ.get("COMMBENCH_BENCH_COLLECTIVES", "")
PATTERNS_BIN = os.environ.get("COMMBENCH_BENCH_PATTERNS", "")
TOPOLOGY_BIN = os.environ.get("COMMBENCH_BENCH_TOPOLOGY", "")
TOPOLOGY_FIXTURES = os.path.join(HERE, "..", "fixtures", "topology")
MPIEXEC = os.environ.get("COMMBENCH_MPIEXEC", "")
CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser") if shutil.which(n)), None)

sys.path.insert(0, SCRIPTS)
try:
    import matplotlib.image
    import pandas  # noqa: F401

    from commbench_results.collectives_figure import THEORETICAL_STYLE, build_collectives_figure
    from commbench_results.topology_figure import build_topology_figure
    from commbench_results.reader import read_result
    from commbench_results.sizes import size_label
    LIBRARIES = ""
except ImportError as e:
    LIBRARIES = (f"{e.name} is not installed for {sys.executable} (scripts/test.sh installs python3-matplotlib and "
                 "python3-pandas)")

needs_libraries = unittest.skipIf(LIBRARIES, LIBRARIES)
needs_mpi = unittest.skipUnless(BIN and MPIEXEC, "COMMBENCH_BENCH_COLLECTIVES or COMMBENCH_MPIEXEC not set")

OPS = ("allreduce", "allgather")
SWEEP = ("-b", "8", "-e", "32K", "-f", "8", "--op", ",".join(OPS), "--max-time-per-size", "0.3")


def run_bench(directory, name, ranks):
    """One real run: CSV and JSON of `ranks` MPI ranks, named NAME.csv/NAME.json."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    csv_path, json_path = os.path.join(directory, name + ".csv"), os.path.join(directory, name + ".json")
    p = subprocess.run([MPIEXEC, "-q", "--oversubscribe", "-np", str(ranks), BIN, *SWEEP, "-c", "--csv", csv_path,
                        "--json", json_path], capture_output=True, text=True, timeout=300, env=env)
    if p.returncode != 0:
        raise AssertionError(f"bench-collectives failed ({p.returncode}): {p.stderr}")
    return csv_path, json_path


def script(path, *args):
    p = subprocess.run([sys.executable, path, *map(str, args)], capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def read_text(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def write_text(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def read_csv_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def write_csv_rows(path, rows):
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


@needs_libraries
@needs_mpi
class RealRunTest(unittest.TestCase):
    """Runs bench-collectives once for the class (2 ranks; 3 more for the overlay)."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="commbench-plots-")
        cls.csv, cls.json = run_bench(cls.dir, "two", 2)
        cls.rows = read_csv_rows(cls.csv)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def sizes_of(self, op):
        return sorted(int(r["bytes"]) for r in self.rows if r["op"] == op)

    def with_theoretical(self, name, busbw_gbps):
        """The real rows with a theoretical busbw, as a run on a modelled node has."""
        rows = read_csv_rows(self.csv)
        for r in rows:
            r["theoretical_busbw_gbps"] = str(busbw_gbps)
            r["efficiency"] = str(float(r["busbw_gbps"]) / busbw_gbps)
        write_csv_rows(self.path(name), rows)
        return self.path(name)


def legend_lines(axes):
    return [line for line in axes.lines if not line.get_label().startswith("_")]


class Figure(RealRunTest):
    def test_one_line_per_op_with_the_sizes_on_a_log2_axis(self):
        figure = build_collectives_figure([read_result(self.csv)])
        busbw, algbw, _, efficiency = figure.axes
        self.assertEqual([line.get_label() for line in legend_lines(busbw)], list(OPS))
        self.assertEqual(len(legend_lines(algbw)), len(OPS))
        for line, op in zip(legend_lines(busbw), OPS):
            self.assertEqual(list(line.get_xdata()), self.sizes_of(op))
            expected = [float(r["busbw_gbps"]) for r in sorted((r for r in self.rows if r["op"] == op),
                                                                key=lambda r: int(r["bytes"]))]
            self.assertEqual(list(line.get_ydata()), expected)
        self.assertEqual(busbw.get_xscale(), "log")
        self.assertEqual(busbw.xaxis.get_transform().base, 2)
        self.assertEqual(busbw.get_ylabel(), "busbw (GB/s)")
        self.assertEqual(algbw.get_ylabel(), "algbw (GB/s)")
        self.assertIn("log₂", efficiency.get_xlabel())
        tick_labels = [efficiency.xaxis.get_major_formatter()(t, 0) for t in efficiency.get_xticks()]
        self.assertIn("4KiB", tick_labels)
        # Host ranks on one node have no theoretical busbw: no dashed line, and the
        # efficiency panel says why instead of staying blank.
        self.assertFalse([line for line in busbw.lines if line.get_linestyle() == THEORETICAL_STYLE])
        self.assertIn("no theoretical busbw", " ".join(t.get_text() for t in efficiency.texts))
        title = busbw.get_title()
        self.assertIn("bench-collectives · mpi", title)
        self.assertIn("2 ranks on 1 node", title)

    def test_time_on_a_log_axis_keeps_small_messages_apart_from_zero(self):
        figure = build_collectives_figure([read_result(self.csv)])
        time_axes = figure.axes[2]
        self.assertEqual(time_axes.get_yscale(), "log")
        self.assertTrue(time_axes.get_ylabel().startswith("time (µs"), time_axes.get_ylabel())
        low, high = time_axes.get_ylim()
        heights = []  # of each point, as a fraction of the panel's height
        for line, op in zip(legend_lines(time_axes), OPS):
            rows = sorted((r for r in self.rows if r["op"] == op), key=lambda r: int(r["bytes"]))
            self.assertEqual(list(line.get_ydata()), [float(r["time_us"]) for r in rows])
            heights += [(math.log(float(r["time_us"])) - math.log(low)) / (math.log(high) - math.log(low))
                        for r in rows if int(r["bytes"]) <= 4096]
        # On a linear axis the rows to 4 KiB sat on zero; here each stands clear of the bottom.
        self.assertGreater(min(heights), 0.02, heights)

    def test_theoretical_busbw_dashed_in_the_line_colour_and_efficiency_panel(self):
        figure = build_collectives_figure([read_result(self.with_theoretical("theo.csv", 40.0))])
        busbw, _, _, efficiency = figure.axes
        solid = legend_lines(busbw)
        dashed = [line for line in busbw.lines if line.get_linestyle() == THEORETICAL_STYLE]
        self.assertEqual(len(dashed), len(OPS))
        for line, theoretical in zip(solid, dashed):
            self.assertEqual(line.get_color(), theoretical.get_color())
            self.assertEqual(list(theoretical.get_xdata()), list(line.get_xdata()))
            self.assertEqual(set(theoretical.get_ydata()), {40.0})
        self.assertIn("dashed: theoretical busbw (spec bound)", [t.get_text() for t in busbw.get_legend().get_texts()])
        self.assertEqual(len(efficiency.lines), len(OPS))
        expected = sorted(float(r["busbw_gbps"]) / 40.0 * 100 for r in self.rows if r["op"] == OPS[0])
        self.assertEqual(sorted(efficiency.lines[0].get_ydata()), expected)

    def test_runs_overlaid_are_told_apart_by_their_provenance(self):
        _, three = run_bench(self.dir, "three", 3)
        figure = build_collectives_figure([read_result(self.json), read_result(three)])
        labels = [line.get_label() for line in legend_lines(figure.axes[0])]
        # The start time joins the label when the two runs started in different minutes.
        expected = [f"{op} — {n} ranks on 1 node" for n in (2, 3) for op in OPS]
        self.assertEqual(len(labels), len(expected), labels)
        for label, start in zip(labels, expected):
            self.assertTrue(label.startswith(start), (label, start))
        # One hue per op across runs: allreduce of the two runs differs only in shade.
        self.assertNotEqual(legend_lines(figure.axes[0])[0].get_color(), legend_lines(figure.axes[0])[2].get_color())

    def test_provenance_from_csv_comment_lines(self):
        # A CSV alone (no JSON beside it) whose '#' lines carry the console header's provenance.
        os.makedirs(self.path("alone"), exist_ok=True)
        alone = self.path(os.path.join("alone", "run.csv"))
        write_text(alone, "# bench-collectives 0.1.0 (commit abc1234)\n# backend: mpi (Open MPI v4.1.4)\n"
                   "# ranks: 2  nodes: 1  started: 2026-01-02T03:04:05Z\n#   rank 0-1 hostx\n" + read_text(self.csv))
        result = read_result(alone)
        self.assertEqual(len(result.table), len(self.rows))
        self.assertEqual(list(result.table["line"])[:2], [6, 7])
        title = build_collectives_figure([result]).axes[0].get_title()
        self.assertEqual(title, "bench-collectives · mpi (Open MPI v4.1.4) · 2 ranks on 1 node: hostx · "
                         "2026-01-02 03:04 UTC · commit abc1234")

    def test_png_and_svg_are_written_and_show_the_lines(self):
        png, svg = self.path("sweep.png"), self.path("sweep.svg")
        for out in (png, svg):
            self.assertEqual(script(PLOT, self.csv, "-o", out), (0, "", ""))
        with open(png, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        image = matplotlib.image.imread(png)
        self.assertEqual(image.shape[:2], (1725, 1650))  # 11 x 11.5 inches at 150 dpi
        # tab:blue, the first line's colour, covers a real stretch of the picture.
        blue = (abs(image[:, :, 0] - 0.122) < 0.05) & (abs(image[:, :, 1] - 0.467) < 0.05) & \
               (abs(image[:, :, 2] - 0.706) < 0.05)
        self.assertGreater(blue.sum(), 500)
        columns = blue.any(axis=0).nonzero()[0]
        self.assertGreater(columns.max() - columns.min(), image.shape[1] // 2)
        with open(svg) as f:
            text = f.read()
        self.assertIn("<svg", text)
        self.assertGreater(len(text), 20000)

    def test_usage_errors(self):
        rc, out, err = script(PLOT, self.csv, "-o", self.path("sweep.jpg"))
        self.assertEqual(rc, 2)
        self.assertIn("must end in .png or .svg", err)
        rc, _, err = script(PLOT, self.csv)
        self.assertEqual(rc, 2)
        self.assertIn("nothing to write", err)


class ResultFiles(RealRunTest):
    """What plot and compare share with the commands' shell: result files checked before any
    is written and written whole, one-line usage errors, and Ctrl-C without a traceback."""

    def refused(self, tool, *args):
        rc, out, err = script(tool, *args)
        self.assertEqual(rc, 2, out + err)
        self.assertEqual(err.count("\n"), 1, err)
        return err.rstrip("\n")

    def test_a_result_file_is_neither_an_input_nor_the_other_result(self):
        same = self.path("same.csv")
        shutil.copy(self.csv, same)
        self.assertEqual(self.refused(PLOT, same, "--html", same),
                         f"plot: error: --html {same}: a file this run reads (FILE {same}); name another result file")
        self.assertEqual(read_text(same), read_text(self.csv))
        svg = self.path("r.svg")
        self.assertEqual(self.refused(PLOT, self.csv, "-o", svg, "--html", svg),
                         f"plot: error: --html: same file as -o ({svg})")
        # A report that cannot be written leaves no picture behind either.
        picture = self.path("ok.png")
        self.assertIn("cannot create directory /proc/nonexistent",
                      self.refused(PLOT, self.csv, "-o", picture, "--html", "/proc/nonexistent/x.html"))
        self.assertFalse(os.path.exists(picture))
        # Folders are made, and nothing but the results is left in them.
        rc, _, err = script(PLOT, self.csv, "-o", self.path("sub/x.png"), "--html", self.path("sub/x.html"))
        self.assertEqual(rc, 0, err)
        self.assertEqual(sorted(os.listdir(self.path("sub"))), ["x.html", "x.png"])

    def test_usage_errors_are_one_line_and_a_flag_given_twice_is_one(self):
        self.assertEqual(self.refused(PLOT, self.csv, "-o", self.path("a.png"), "-o", self.path("b.png")),
                         "plot: error: -o/--output: given 2 times; give it once (see --help)")
        self.assertEqual(self.refused(COMPARE, self.csv, self.csv, "--bogus"),
                         "compare: error: unrecognized arguments: --bogus (see --help)")
        self.assertIn("--noise-factor: 'nan' must be a number of at least 0",
                      self.refused(COMPARE, self.csv, self.csv, "--noise-factor", "nan"))
        self.assertIn("--tolerance", self.refused(COMPARE, self.csv, self.csv, "--tolerance=3%", "--tolerance", "4%"))

    def test_a_file_plot_does_not_draw_says_what_it_is(self):
        array = self.path("array.json")
        write_text(array, "[1, 2]\n")
        self.assertIn(f"{array}:1: a JSON array: not a commbench result", self.refused(PLOT, array, "-o",
                                                                                       self.path("a.png")))
        mixed = self.path("patterns.csv")
        write_text(mixed, "record,step,step_seconds\nstep,0,0.1\n")
        self.assertIn(f"{mixed}:1: a CSV of mixed records (bench-patterns, bench-replay, bench-validate, a soak): plot "
                      "and compare read that run's --json", self.refused(PLOT, mixed, "-o", self.path("m.png")))


class BadInput(RealRunTest):
    def assert_one_error_line(self, args, expected):
        rc, out, err = script(PLOT, *args, "-o", self.path("bad.png"))
        self.assertEqual((rc, out), (2, ""), err)
        self.assertEqual(err.count("\n"), 1, err)
        self.assertRegex(err.rstrip("\n"), expected)
        self.assertFalse(os.path.exists(self.path("bad.png")))

    def test_a_bad_number_names_file_and_line(self):
        lines = read_text(self.csv).splitlines()
        fields = lines[2].split(",")
        fields[21] = "fast"  # busbw_gbps
        lines[2] = ",".join(fields)
        bad = self.path("bad-number.csv")
        write_text(bad, "\n".join(lines) + "\n")
        self.assert_one_error_line([bad], r"^plot: error: " + re.escape(bad) + r":3: 'busbw_gbps' must be a number, "
                                   r"not 'fast'$")

    def test_a_short_row_a_bad_header_truncated_json_unknown_schema(self):
        lines = read_text(self.csv).splitlines()
        short = self.path("short.csv")
        write_text(short, "\n".join(lines[:3] + [lines[3].rsplit(",", 2)[0]]) + "\n")
        self.assert_one_error_line([short], re.escape(short) + r":4: \d+ fields, but the header names \d+ columns$")
        header = self.path("header.csv")
        write_text(header, "a,b,c\n1,2,3\n")
        self.assert_one_error_line([header], re.escape(header) + r":1: not a commbench CSV")
        text = read_text(self.json)
        truncated = self.path("truncated.json")
        write_text(truncated, text[:len(text) // 2])
        line = text[:len(text) // 2].count("\n") + 1
        self.assert_one_error_line([truncated], re.escape(truncated) + f":{line}: not valid JSON")
        doc = json.loads(text)
        doc["schema"] = "commbench.collectives/9"
        future = self.path("future.json")
        write_text(future, json.dumps(doc, indent=2))
        self.assert_one_error_line([future], re.escape(future) + r":2: schema 'commbench.collectives/9': this "
                                   r"script reads versions 1, 2 of commbench.collectives$")

    def test_a_bad_json_row_names_its_line(self):
        doc = json.loads(read_text(self.json))
        doc["rows"][1]["time_us"] = "slow"
        bad = self.path("bad-row.json")
        text = json.dumps(doc, indent=2)
        write_text(bad, text)
        # The second row object starts on the line of its second '{' after "rows".
        rows_at = text.index('"rows"')
        second = text.index("{", text.index("{", rows_at) + 1)
        line = text.count("\n", 0, second) + 1
        self.assert_one_error_line([bad], re.escape(bad) + f":{line}: 'time_us' must be a number, not \"slow\"$")


class Compare(RealRunTest):
    def drop(self, name, case_row, fraction, noise=None):
        """A copy of the real run with one row `fraction` slower in bandwidth (and `noise`)."""
        rows = read_csv_rows(self.csv)
        row = rows[case_row]
        scale = 1 / (1 - fraction)
        row["time_us"] = str(float(row["time_us"]) * scale)
        for column in ("algbw_gbps", "busbw_gbps"):
            row[column] = str(float(row[column]) / scale)
        if noise is not None:
            row["noise"] = str(noise)
        write_csv_rows(self.path(name), rows)
        return self.path(name)

    def test_identical_runs_pass(self):
        rc, out, err = script(COMPARE, self.csv, self.json)
        self.assertEqual(rc, 0, err)
        self.assertIn(f"compare: {len(self.rows)} matched rows: 0 regressions, 0 with wrong results, 0 faster, "
                      f"{len(self.rows)} within threshold", out)

    def test_a_twenty_percent_drop_is_a_regression(self):
        # The row's noise as a quiet machine measures it (1 %): this shared test machine's own
        # noise can exceed 20 %, and then rightly nothing would be flagged.
        base = self.drop("quiet-base.csv", 1, 0.0, noise=0.01)
        new = self.drop("drop.csv", 1, 0.20, noise=0.01)
        rc, out, err = script(COMPARE, base, new)
        self.assertEqual(rc, 1, out + err)
        flagged = [line for line in out.splitlines() if line.endswith("REGRESSION")]
        self.assertEqual(len(flagged), 1, out)
        self.assertIn("-20.0%", flagged[0])
        self.assertTrue(flagged[0].startswith(self.rows[1]["op"]))
        self.assertIn(size_label(int(self.rows[1]["bytes"])), flagged[0])
        self.assertIn("1 regression,", out)

    def test_noise_widens_the_threshold(self):
        # Each row 10 % noise: combined 14.1 %, times 3 = 42 %; a 20 % drop is within it.
        base = self.drop("noisy-base.csv", 1, 0.0, noise=0.1)
        new = self.drop("noisy-drop.csv", 1, 0.20, noise=0.1)
        rc, out, err = script(COMPARE, base, new)
        self.assertEqual(rc, 0, out + err)
        self.assertRegex(out, r"-20\.0%\s+±42\.4%\s+same")
        # Without the noise factor the tolerance alone decides.
        self.assertEqual(script(COMPARE, base, new, "--noise-factor", "0")[0], 1)

    def test_unmatched_rows_are_listed_and_do_not_fail(self):
        rows = read_csv_rows(self.csv)
        new = self.path("fewer.csv")
        write_csv_rows(new, rows[:-1])
        rc, out, err = script(COMPARE, self.csv, new)
        self.assertEqual(rc, 0, err)
        last = rows[-1]
        self.assertIn(f"unmatched, only in the baseline: {last['op']} float out", out)
        self.assertIn(f"({self.csv}:{len(rows) + 1})", out)
        self.assertIn("1 unmatched (1 only in the baseline, 0 only in the new run)", out)

    def test_malformed_input_names_file_and_line(self):
        lines = read_text(self.csv).splitlines()
        lines.insert(3, '"unterminated,')
        bad = self.path("malformed.csv")
        write_text(bad, "\n".join(lines) + "\n")
        rc, out, err = script(COMPARE, self.csv, bad)
        self.assertEqual((rc, out), (2, ""))
        self.assertRegex(err, r"^compare: error: " + re.escape(bad) + r":4: ")
        self.assertEqual(err.count("\n"), 1, err)


class HtmlReport(RealRunTest):
    def test_report_renders_offline_in_headless_chromium_with_the_plot(self):
        report = self.path("report.html")
        self.assertEqual(script(PLOT, self.json, "--html", report), (0, "", ""))
        html = read_text(report)
        # Single file, nothing fetched: no scripts, style sheets or images from elsewhere.
        self.assertIsNone(re.search(r"""(src|href)\s*=\s*["']?(https?:|//)|<link|<script|url\((?!#)""", html), html[:200])
        self.assertEqual(html.count("<svg"), 1)
        self.assertIn("2 ranks on 1 node", html)
        shot = self.path("shot.png")
        p = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                            "--hide-scrollbars", "--window-size=1200,1000", f"--screenshot={shot}",
                            "file://" + report], capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        image = matplotlib.image.imread(shot)
        self.assertEqual(image.shape[:2], (1000, 1200))
        # Both ops' lines are drawn (tab:blue allreduce, tab:orange allgather) across the plot.
        for name, rgb in (("blue", (0.122, 0.467, 0.706)), ("orange", (1.0, 0.498, 0.055))):
            mask = ((abs(image[:, :, 0] - rgb[0]) < 0.06) & (abs(image[:, :, 1] - rgb[1]) < 0.06) &
                    (abs(image[:, :, 2] - rgb[2]) < 0.06))
            self.assertGreater(mask.sum(), 300, name)
            columns = mask.any(axis=0).nonzero()[0]
            self.assertGreater(columns.max() - columns.min(), 500, name)
        # The plot sits below the heading: dark axis pixels in the upper part of the page.
        dark = (image[:, :, :3].sum(axis=2) < 0.6)
        self.assertGreater(dark[100:900].sum(), 2000)


if __name__ == "__main__":
    unittest.main()


@needs_libraries
class Topology(unittest.TestCase):
    """The files the real bench-topology writes for a DGX H100 fixture: its JSON plots as
    the model's busbw per collective, its CSV as the links."""

    @classmethod
    def setUpClass(cls):
        if not TOPOLOGY_BIN or os.environ.get("COMMBENCH_HAVE_HWLOC", "1") != "1":
            raise unittest.SkipTest("COMMBENCH_BENCH_TOPOLOGY not set, or built without hwloc")
        cls.dir = tempfile.mkdtemp(prefix="commbench-plots-topology-")
        cls.json, cls.csv = os.path.join(cls.dir, "t.json"), os.path.join(cls.dir, "t.csv")
        p = subprocess.run([TOPOLOGY_BIN, "--hwloc-xml", os.path.join(TOPOLOGY_FIXTURES, "hwloc", "dgx-h100.xml"),
                            "--sysfs-root", os.path.join(TOPOLOGY_FIXTURES, "sysfs", "dgx-h100"),
                            "--json", cls.json, "--csv", cls.csv], capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            raise AssertionError(f"bench-topology failed ({p.returncode}): {p.stderr}")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_the_json_it_writes_plots_the_models_busbw(self):
        result = read_result(self.json)
        self.assertEqual(result.kind, "topology")
        with open(self.json) as f:
            doc = json.load(f)
        self.assertEqual(result.schema, doc["schema"])
        expected = {e["collective"] for e in doc["theoretical_busbw"]}
        self.assertEqual(set(result.table["collective"]), expected)
        figure = build_topology_figure([result])
        ticks = {label.get_text() for label in figure.axes[0].get_xticklabels()}
        self.assertEqual(ticks, expected)
        png = os.path.join(self.dir, "t.png")
        self.assertEqual(script(PLOT, self.json, "-o", png), (0, "", ""))

    def test_the_csv_it_writes_plots_its_links(self):
        result = read_result(self.csv)
        self.assertEqual(result.kind, "topology-links")
        self.assertEqual(len(result.table), len(read_csv_rows_skipping_comments(self.csv)))
        png = os.path.join(self.dir, "links.png")
        self.assertEqual(script(PLOT, self.csv, "-o", png), (0, "", ""))


def read_csv_rows_skipping_comments(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))
