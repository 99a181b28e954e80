"""bench-validate --soak's timeline: every node's pair reading, interval by interval, with
the soak's steady level, the line below which a reading is low and the line below which
an event fails, and every event shaded over the time it lasted, named with its node or
link."""
import matplotlib
from matplotlib.figure import Figure

from .provenance import describe_run


def build_soak_figure(results):
    figure = Figure(figsize=(11, 3.2 + 2.6 * len(results)), layout="constrained")
    axes_list = figure.subplots(len(results), 1, squeeze=False)[:, 0]
    for axes, result in zip(axes_list, results):
        _timeline(axes, result)
    figure.suptitle("commbench: soak timeline (bench-validate --soak)", fontsize=13, fontweight="bold")
    lines = list(dict.fromkeys(describe_run(r.provenance) or r.path for r in results))
    figure.supxlabel("\n".join(lines[:4]), fontsize=7.5, color="0.3")
    return figure


def _timeline(axes, result):
    table, soak = result.table, result.extra.get("soak", {})
    palette = matplotlib.colormaps["tab10"]
    nodes = sorted(set(table["node_a"]) | set(table["node_b"]))
    for index, node in enumerate(nodes):
        mine = table[(table["node_a"] == node) | (table["node_b"] == node)].sort_values("start_s")
        axes.plot(mine["start_s"], mine["gbps"], marker=".", markersize=3, linewidth=0.8,
                  color=palette(index % 10), label=node if len(nodes) <= 16 else None)
    for key, text, style in (("steady_gbps", "steady level", "-"), ("low_below_gbps", "low below", ":")):
        if isinstance(soak.get(key), (int, float)):
            axes.axhline(soak[key], color="0.35", linestyle=style, linewidth=1, label=text)
    if isinstance(soak.get("steady_gbps"), (int, float)) and isinstance(soak.get("fraction"), (int, float)):
        axes.axhline(soak["steady_gbps"] * soak["fraction"], color="#c44e52", linestyle="--", linewidth=1,
                     label=f"fails below ({soak['fraction']:g} of the level)")
    for event in result.extra.get("events", []):
        failing = event.get("result") == "fail"
        axes.axvspan(event["start_s"], event["end_s"], color="#c44e52" if failing else "#dd8452", alpha=0.18)
        name = event["node_a"] if event["kind"] == "node" else f"{event['node_a']} - {event['node_b']}"
        axes.annotate(f"{event['kind']} {name}\n{'FAIL' if failing else 'pass'}, -{event['depth']:.0%}",
                      (event["start_s"], 1.0), xycoords=("data", "axes fraction"), va="top", fontsize=7.5,
                      xytext=(3, -3), textcoords="offset points")
    axes.set_xlabel("seconds since the soak began")
    axes.set_ylabel("pair bandwidth (GB/s)")
    axes.set_ylim(bottom=0)
    axes.grid(True, alpha=0.35)
    axes.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    axes.set_title(result.path, fontsize=9)
