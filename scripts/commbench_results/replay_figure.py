"""bench-replay's answer as a picture: each class of the job's calls as a point at its size
and busbw (its area grows with the calls), over the fabric's busbw curve for the same
collective (a bench-collectives sweep, --fabric) and the fabric's figure at the job's own
size (hollow, joined to the job's point: the gap is what the job did not get). One panel
per collective."""
import math
import textwrap

import matplotlib
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

from .errors import InputError
from .provenance import describe_run
from .sizes import size_label


def build_replay_figure(results, fabric=None):
    if len(results) != 1:
        raise InputError(results[1].path, 1, "plot one bench-replay file at a time (its job's calls over its fabric)")
    result = results[0]
    # A point needs a size and a busbw: a barrier has no size, a call the traces did not
    # time or whose group they do not say has no busbw (the file's notes say why). A class
    # the traces did not time may still have the fabric's figure at its size: that alone.
    drawable = result.table["busbw_gbps"].notna() | result.table["fabric_busbw_gbps"].notna()
    table = result.table[(result.table["bytes"] > 0) & drawable]
    if table.empty:
        raise InputError(result.path, None, "no class of the job's calls has a size and a busbw to plot "
                         "(a barrier has no size; a call the traces did not time, or whose group they do not say, "
                         "has no busbw: see the file's notes)")
    left_out = len(result.table) - len(table)
    ops = list(dict.fromkeys(table["op"]))
    # Wide enough for the title and the verdict under one panel; longer lines are wrapped.
    width = max(10.0, 5.2 * len(ops) + 1.5)
    figure = Figure(figsize=(width, 4.6), layout="constrained")
    axes_list = figure.subplots(1, len(ops), squeeze=False)[0]
    for axes, op in zip(axes_list, ops):
        _panel(axes, op, table[table["op"] == op], fabric)
    figure.suptitle("commbench: the job's collectives against the fabric (bench-replay)", fontsize=13,
                    fontweight="bold")
    lines = [describe_run(result.provenance) or result.path]
    verdict = result.extra.get("fabric", {}).get("verdict") or result.extra.get("verdict", "")
    if verdict:
        lines.append(verdict)
    if fabric is not None:
        lines.append(f"fabric curve: {fabric.path}")
    if left_out:
        lines.append(f"not drawn: {left_out} class{'es' if left_out != 1 else ''} of calls without a size or a busbw")
    if table["busbw_gbps"].isna().any():
        lines.append("a hollow point alone: the fabric at the size of calls the traces did not time")
    wrapped = [part for line in lines for part in textwrap.wrap(line, width=int(width * 17))]
    figure.supxlabel("\n".join(wrapped), fontsize=7.5, color="0.3")
    return figure


def fabric_series(fabric, op, group_ranks):
    """The fabric's (bytes, busbw) for `op`, from the series whose rank count is nearest
    the job's group (the same count where the sweep has it), by increasing size."""
    rows = fabric.table[fabric.table["op"] == op]
    if rows.empty:
        return None, []
    counts = sorted(set(int(r) for r in rows["ranks"]))
    ranks = min(counts, key=lambda n: (abs(math.log(n / group_ranks)) if n > 0 and group_ranks > 0 else math.inf, n))
    chosen = rows[rows["ranks"] == ranks].groupby("bytes")["busbw_gbps"].mean()
    return ranks, sorted(chosen.items())


def _panel(axes, op, rows, fabric):
    colour = matplotlib.colormaps["tab10"](0)
    sizes = list(rows["bytes"])
    if fabric is not None:
        group = int(rows["group_ranks"].dropna().iloc[0]) if rows["group_ranks"].notna().any() else 0
        ranks, points = fabric_series(fabric, op, group)
        if points:
            axes.plot([b for b, _ in points], [g for _, g in points], color="0.45", linewidth=1.4, marker=".",
                      label=f"fabric: bench-collectives, {ranks} ranks")
            sizes += [b for b, _ in points]
    timed = rows[rows["busbw_gbps"].notna()]
    calls = timed["calls"].fillna(1)
    axes.scatter(timed["bytes"], timed["busbw_gbps"], s=[30 + 12 * math.sqrt(c) for c in calls], color=colour,
                 zorder=3, label="the job's calls (area: how many)" if not timed.empty else "_nolegend_")
    with_fabric = rows[rows["fabric_busbw_gbps"].notna()]
    if not with_fabric.empty:
        axes.scatter(with_fabric["bytes"], with_fabric["fabric_busbw_gbps"], s=40, facecolors="none",
                     edgecolors="0.2", zorder=3, label="the fabric at the job's size")
        for _, row in with_fabric[with_fabric["busbw_gbps"].notna()].iterrows():
            axes.plot([row["bytes"]] * 2, [row["busbw_gbps"], row["fabric_busbw_gbps"]], color="0.2",
                      linestyle=":", linewidth=1)
    _size_axis(axes, sizes)
    axes.set_yscale("log")
    axes.set_ylabel("busbw (GB/s; log scale)")
    axes.set_title(op, fontsize=10)
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize=7, loc="best")


def _size_axis(axes, sizes):
    axes.set_xscale("log", base=2)
    axes.set_xlabel("message size (bytes, nccl-tests convention; log₂ scale)")
    low, high = math.floor(math.log2(min(sizes))), math.ceil(math.log2(max(sizes)))
    step = next(s for s in (1, 2, 3, 4, 5, 10, 20) if (high - low) / s <= 8)
    axes.xaxis.set_major_locator(FixedLocator([2.0 ** e for e in range(low, high + 1, step)]))
    axes.xaxis.set_minor_locator(FixedLocator([2.0 ** e for e in range(low, high + 1)]))
    axes.xaxis.set_major_formatter(FuncFormatter(lambda x, _: size_label(x)))
    axes.xaxis.set_minor_formatter(NullFormatter())
    axes.set_xlim(2.0 ** low / 1.3, 2.0 ** high * 1.3)
