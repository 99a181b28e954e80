"""The sweep plot: busbw, algbw, time and efficiency against message size, one line per
collective and run, the theoretical busbw dashed in the line's colour. Time has a log axis:
small messages are bound by latency, and their bandwidth, on a linear axis beside the large
sizes', is indistinguishable from zero; their time is what tells them apart.

build_collectives_figure() returns a matplotlib Figure without drawing it anywhere, so
tests can inspect its lines and the scripts can save it as PNG or SVG.
"""
import colorsys
import math
from dataclasses import dataclass

import matplotlib
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

from .provenance import describe_run, run_labels
from .sizes import size_label

# What makes two rows of one file belong to different lines (docs/output-format.md).
SERIES_KEYS = ("op", "dtype", "placement", "redop", "root", "ranks")
RUN_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
THEORETICAL_STYLE = "--"
MAX_TITLE_RUNS = 4


@dataclass
class Series:
    label: str
    rows: object          # the rows of one line, sorted by size (a pandas DataFrame)
    run: int              # index of the file it came from
    key: tuple            # what it measures (op, dtype, ...): the same key in two runs gets one hue


def build_collectives_figure(results, yscale="linear"):
    series = collect_series(results)
    colours = _colours(series)
    # Without any theoretical figure the efficiency panel only says why: keep it short.
    has_efficiency = any(s.rows["efficiency"].notna().any() for s in series)
    figure = Figure(figsize=(11, 12.5 if has_efficiency else 11.5), layout="constrained")
    busbw_axes, algbw_axes, time_axes, efficiency_axes = figure.subplots(
        4, 1, sharex=True, gridspec_kw={"height_ratios": [3.2, 2, 2, 1.6 if has_efficiency else 0.55]})
    for colour, s in zip(colours, series):
        _draw_series(s, colour, (busbw_axes, algbw_axes, time_axes), efficiency_axes)
    _style_bandwidth_axes(busbw_axes, "busbw (GB/s)", yscale)
    _style_bandwidth_axes(algbw_axes, "algbw (GB/s)", yscale)
    _style_time_axes(time_axes)
    _style_efficiency_axes(efficiency_axes, results)
    _size_axis(efficiency_axes, [b for s in series for b in s.rows["bytes"]])
    _legend(busbw_axes, series, results)
    _title(figure, results)
    return figure


def collect_series(results):
    labels = run_labels(results)
    grouped = []
    for run, result in enumerate(results):
        table = result.table
        keys = [k for k in SERIES_KEYS if k in table.columns]
        # dropna=False: redop and root are empty for some collectives, and still a line.
        for key, rows in table.groupby(keys, dropna=False, sort=False):
            grouped.append((run, dict(zip(keys, key)), rows.sort_values("bytes")))
    # Name a line only by what varies between lines: "allreduce", not "allreduce float out sum".
    # Only what varies within one run names a line; what differs between runs is in the run's
    # label. Empty values do not count: redop is empty for allgather and "sum" for every
    # reduction, which says nothing a reader needs.
    varying = [k for k in SERIES_KEYS[1:]
               if any(len({_text(key.get(k)) for r, key, _ in grouped if r == run} - {""}) > 1
                      for run in range(len(results)))]
    series = []
    for run, key, rows in grouped:
        parts = [str(key["op"])] + [_key_text(k, key[k]) for k in varying]
        label = " ".join(p for p in parts if p)
        if labels[run]:
            label += f" — {labels[run]}"
        series.append(Series(label, rows, run, tuple(_text(key.get(k)) for k in SERIES_KEYS)))
    return series


def _text(value):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))  # pandas' grouping may turn an integer column with gaps into floats
    return str(value)


def _key_text(key, value):
    text = _text(value)
    if not text:
        return ""
    return {"ranks": f"{text} ranks", "root": f"root {text}", "placement": f"{text}-of-place" if text == "out"
            else "in-place" if text == "in" else text}.get(key, text)


def _colours(series):
    """One hue per measured thing (allreduce float ...), a darker or lighter shade of it per run,
    so before/after pairs sit side by side in colour and the legend reads as pairs."""
    keys = list(dict.fromkeys(s.key for s in series))
    palette = matplotlib.colormaps["tab10" if len(keys) <= 10 else "tab20"]
    return [_shade(palette(keys.index(s.key) % palette.N), s.run) for s in series]


def _shade(colour, run):
    if run == 0:
        return colour
    hue, lightness, saturation = colorsys.rgb_to_hls(*colour[:3])
    # Alternately darker and lighter, further for later runs, staying readable on white.
    step = (run + 1) // 2 * 0.17
    lightness = max(0.12, lightness - step) if run % 2 else min(0.78, lightness + step)
    return colorsys.hls_to_rgb(hue, lightness, saturation)


def _draw_series(s, colour, measured_axes, efficiency_axes):
    busbw_axes, algbw_axes, time_axes = measured_axes
    sizes = list(s.rows["bytes"])
    marker = RUN_MARKERS[s.run % len(RUN_MARKERS)]
    style = dict(color=colour, marker=marker, markersize=3.5, linewidth=1.6)
    busbw_axes.plot(sizes, s.rows["busbw_gbps"], label=s.label, **style)
    algbw_axes.plot(sizes, s.rows["algbw_gbps"], label=s.label, **style)
    time_axes.plot(sizes, s.rows["time_us"], label=s.label, **style)
    theoretical = s.rows["theoretical_busbw_gbps"]
    if theoretical.notna().any():
        # A leading underscore keeps it out of the legend; one legend entry explains the dashes.
        busbw_axes.plot(sizes, theoretical, THEORETICAL_STYLE, color=colour, linewidth=1.2,
                        label=f"_theoretical busbw: {s.label}")
    efficiency = s.rows["efficiency"]
    if efficiency.notna().any():
        efficiency_axes.plot(sizes, efficiency * 100, label=s.label, **style)
    wrong = s.rows[s.rows["wrong"].map(lambda w: w is not None and w > 0)]
    if not wrong.empty:
        busbw_axes.plot(list(wrong["bytes"]), wrong["busbw_gbps"], linestyle="none", marker="x", color="red",
                        markersize=9, markeredgewidth=2, label="_wrong results")


def _style_bandwidth_axes(axes, ylabel, yscale):
    axes.set_ylabel(ylabel)
    axes.set_yscale(yscale)
    if yscale == "linear":
        axes.set_ylim(bottom=0)
    axes.grid(True, which="major", alpha=0.35)
    axes.grid(True, which="minor", axis="x", alpha=0.12)


def _style_time_axes(axes):
    axes.set_ylabel("time (µs, log scale)\nslowest rank's mean")
    axes.set_yscale("log")
    axes.grid(True, which="major", alpha=0.35)
    axes.grid(True, which="minor", axis="x", alpha=0.12)


def _style_efficiency_axes(axes, results):
    axes.set_ylabel("efficiency (%)\nbusbw / theoretical")
    axes.grid(True, which="major", alpha=0.35)
    if axes.lines:
        axes.set_ylim(0, max(105, max(max(line.get_ydata()) for line in axes.lines) * 1.05))
        return
    axes.set_ylim(0, 100)
    axes.set_yticks([])
    axes.set_ylabel("efficiency")
    reason = _unknown_reason(results)
    axes.text(0.5, 0.5, "no theoretical busbw in these results, so no efficiency" + (f":\n{reason}" if reason else ""),
              transform=axes.transAxes, ha="center", va="center", fontsize=9, color="0.35", wrap=True)


def _unknown_reason(results):
    """The run's own note on why the model has no figure (host ranks on one node, one rank)."""
    for result in results:
        for note in result.provenance.get("notes", []):
            if note.startswith("theoretical busbw of") and "unknown; " in note:
                return note.split("unknown; ", 1)[1]
    return ""


def _size_axis(axes, sizes):
    axes.set_xscale("log", base=2)
    axes.set_xlabel("message size (the bytes column; log₂ scale)")
    if not sizes:
        return
    low, high = math.floor(math.log2(min(sizes))), math.ceil(math.log2(max(sizes)))
    # At most about a dozen labels whatever the sweep; every power of two gets a minor tick.
    step = next(s for s in (1, 2, 3, 4, 5, 10, 20) if (high - low) / s <= 12)
    first = low + (-low) % step if step <= high - low else low
    axes.xaxis.set_major_locator(FixedLocator([2.0 ** e for e in range(first, high + 1, step)]))
    axes.xaxis.set_minor_locator(FixedLocator([2.0 ** e for e in range(low, high + 1)]))
    axes.xaxis.set_major_formatter(FuncFormatter(lambda x, _: size_label(x)))
    axes.xaxis.set_minor_formatter(NullFormatter())
    axes.set_xlim(2.0 ** low / 1.15, 2.0 ** high * 1.15)


def _legend(axes, series, results):
    handles, labels = axes.get_legend_handles_labels()
    if any(line.get_linestyle() == THEORETICAL_STYLE for line in axes.lines):
        handles.append(Line2D([], [], color="0.3", linestyle=THEORETICAL_STYLE))
        labels.append("dashed: theoretical busbw (spec bound)")
    if any(line.get_label() == "_wrong results" for line in axes.lines):
        handles.append(Line2D([], [], color="red", marker="x", linestyle="none", markeredgewidth=2))
        labels.append("wrong results (--check)")
    # Bandwidth rises with size, so the upper left is where the lines are not.
    axes.legend(handles, labels, loc="upper left", fontsize=8, framealpha=0.9,
                ncol=2 if len(labels) > 8 else 1)


def _title(figure, results):
    lines = ["commbench: bus bandwidth against message size"]
    labels = run_labels(results)
    for label, result in list(zip(labels, results))[:MAX_TITLE_RUNS]:
        text = describe_run(result.provenance, omit=set(label.split(", "))) or result.path
        if not result.complete:
            text += " (interrupted: incomplete sweep)"
        lines.append(f"{label}: {text}" if label else text)
    if len(results) > MAX_TITLE_RUNS:
        lines.append(f"… and {len(results) - MAX_TITLE_RUNS} more runs")
    figure.suptitle(lines[0], fontsize=13, fontweight="bold")
    figure.axes[0].set_title("\n".join(w for line in lines[1:] for w in wrap_provenance(line)), fontsize=8.5,
                             color="0.25")


def wrap_provenance(line, width=125):
    """Long provenance lines (NCCL's version string, many hosts) break at their ' · ' separators
    rather than running off the figure."""
    wrapped, current = [], ""
    for part in line.split(" · "):
        candidate = f"{current} · {part}" if current else part
        if current and len(candidate) > width:
            wrapped.append(current)
            candidate = part
        current = candidate
    return wrapped + [current]
