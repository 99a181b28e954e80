"""bench-topology's results as bars: the busbw the bandwidth model allows per collective
(spec bound and NCCL's achievable figure), and the spec bandwidth of every link."""
import matplotlib
from matplotlib.figure import Figure

from .provenance import describe_run, run_labels


def build_topology_figure(results):
    """Grouped bars per collective: spec and achievable busbw for each file and node count."""
    labels = run_labels(results)
    bars = []  # (legend text, collective -> (spec, achievable))
    for label, result in zip(labels, results):
        for nodes, rows in result.table.groupby("nodes", sort=True):
            text = f"{nodes} node{'s' if nodes != 1 else ''}" + (f" — {label}" if label else "")
            bars.append((text, {r.collective: (r.spec_busbw_gbps, r.achievable_busbw_gbps) for r in rows.itertuples()}))
    collectives = list(dict.fromkeys(c for _, values in bars for c in values))
    figure = Figure(figsize=(10, 5.5), layout="constrained")
    axes = figure.subplots()
    width = 0.8 / max(1, len(bars))
    palette = matplotlib.colormaps["tab10"]
    for index, (text, values) in enumerate(bars):
        xs = [i + index * width for i in range(len(collectives))]
        spec = [_value(values.get(c, (None, None))[0]) for c in collectives]
        achievable = [_value(values.get(c, (None, None))[1]) for c in collectives]
        axes.bar(xs, spec, width, color=palette(index % 10), alpha=0.35, label=f"spec bound, {text}")
        axes.bar(xs, achievable, width * 0.5, color=palette(index % 10), label=f"achievable (NCCL's model), {text}")
    axes.set_xticks([i + width * (len(bars) - 1) / 2 for i in range(len(collectives))], collectives)
    axes.set_ylabel("theoretical busbw (GB/s)")
    axes.grid(True, axis="y", alpha=0.35)
    if not any(_value(v) for _, values in bars for pair in values.values() for v in pair):
        axes.text(0.5, 0.5, "the model gives no busbw for this layout\n" + _first_basis(results),
                  transform=axes.transAxes, ha="center", va="center", color="0.35")
    else:
        # Head room above the tallest bar for the legend, so it covers no bar.
        axes.set_ylim(0, axes.get_ylim()[1] * 1.3)
        axes.legend(fontsize=8, loc="upper center", ncol=2)
    _title(figure, axes, results, "commbench: theoretical busbw of this topology")
    return figure


def build_links_figure(results):
    """One horizontal bar per link of every node (bench-topology --csv), DOWN ports in red."""
    rows = [(f"{r['host']}: {r['from']} → {r['to']}", _value(r["spec_gbps"]), r["type"], r["state"])
            for result in results for r in result.table.to_dict("records")]
    figure = Figure(figsize=(10, max(3.0, 0.28 * len(rows) + 1.5)), layout="constrained")
    axes = figure.subplots()
    types = list(dict.fromkeys(t for _, _, t, _ in rows))
    palette = matplotlib.colormaps["tab10"]
    colours = [("red" if state not in ("", "ACTIVE") else palette(types.index(t) % 10)) for _, _, t, state in rows]
    axes.barh(range(len(rows)), [v for _, v, _, _ in rows], color=colours)
    axes.set_yticks(range(len(rows)), [name for name, _, _, _ in rows], fontsize=7)
    axes.invert_yaxis()
    axes.set_xlabel("spec bandwidth per direction (GB/s; 0 where unknown; red: port not ACTIVE)")
    axes.grid(True, axis="x", alpha=0.35)
    _title(figure, axes, results, "commbench: links of the probed nodes")
    return figure


def _value(v):
    return 0.0 if v is None or v != v else float(v)


def _first_basis(results):
    for result in results:
        for basis in result.table["basis"]:
            if basis:
                return basis
    return ""


def _title(figure, axes, results, heading):
    figure.suptitle(heading, fontsize=13, fontweight="bold")
    axes.set_title("\n".join(describe_run(r.provenance) or r.path for r in results[:4]), fontsize=8.5, color="0.25")
