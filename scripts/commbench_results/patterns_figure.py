"""bench-patterns' steps as stacked bars, one per run or tuning trial: where the step's time
goes (compute alone, compute with communication hidden under it, communication exposed,
and time in which nothing ran), and beside it which collective types the exposed time
belongs to. The parts of a bar add up to the measured step."""
import matplotlib
from matplotlib.figure import Figure

from .provenance import describe_run, run_labels

# (column or derived part, legend text, colour) bottom to top.
STEP_PARTS = (
    ("compute_alone", "compute alone", "#4c72b0"),
    ("overlapped", "compute with communication hidden under it", "#8fb0de"),
    ("exposed_attributed", "communication exposed", "#dd8452"),
    ("unattributed_exposed_seconds", "nothing running (host gaps, waiting)", "#c7c7c7"),
)


def step_parts(row):
    """The four parts of one mean step, in seconds; they sum to step_seconds."""
    exposed_attributed = max(0.0, row["exposed_seconds"] - row["unattributed_exposed_seconds"])
    overlapped = min(row["compute_seconds"], max(0.0, row["communication_busy_seconds"] - exposed_attributed))
    return {
        "compute_alone": row["compute_seconds"] - overlapped,
        "overlapped": overlapped,
        "exposed_attributed": exposed_attributed,
        "unattributed_exposed_seconds": row["unattributed_exposed_seconds"],
    }


def build_patterns_figure(results):
    labels = run_labels(results)
    rows = [result.table.iloc[0] for result in results]
    names = _bar_names(labels, rows, results)
    figure = Figure(figsize=(max(8.0, 2.2 * len(rows) + 5.0), 5.5), layout="constrained")
    step_axes, type_axes = figure.subplots(1, 2, width_ratios=(3, 2))
    bottoms = [0.0] * len(rows)
    parts = [step_parts(row) for row in rows]
    for key, text, colour in STEP_PARTS:
        heights = [part[key] * 1e3 for part in parts]
        step_axes.bar(range(len(rows)), heights, 0.6, bottom=bottoms, color=colour, label=text)
        bottoms = [b + h for b, h in zip(bottoms, heights)]
    for index, row in enumerate(rows):
        exposed_share = row["exposed_seconds"] / row["step_seconds"] if row["step_seconds"] > 0 else 0.0
        step_axes.annotate(f"{row['step_seconds'] * 1e3:.4g} ms\n{exposed_share:.0%} exposed", (index, bottoms[index]),
                           ha="center", va="bottom", fontsize=8, xytext=(0, 3), textcoords="offset points")
    step_axes.set_xticks(range(len(rows)), names, fontsize=8)
    step_axes.set_ylabel("mean step (ms)")
    step_axes.set_ylim(0, max(bottoms) * 1.3 if max(bottoms) > 0 else 1)
    step_axes.grid(True, axis="y", alpha=0.35)
    step_axes.legend(fontsize=8, loc="upper left")
    step_axes.set_title("where the step goes", fontsize=10)
    _exposed_by_type(type_axes, results, names)
    figure.suptitle("commbench: training-step communication (bench-patterns)", fontsize=13, fontweight="bold")
    # The runs' provenance, each different line once (runs of one job share theirs).
    lines = list(dict.fromkeys(describe_run(r.provenance) or r.path for r in results))
    figure.supxlabel("\n".join(lines[:4]), fontsize=7.5, color="0.3")
    return figure


def _exposed_by_type(axes, results, names):
    """Exposed ms per collective type, one group of bars per type, one bar per run."""
    columns = list(dict.fromkeys(c for r in results for c in r.table.columns if c.startswith("exposed:")))
    palette = matplotlib.colormaps["tab10"]
    width = 0.8 / max(1, len(results))
    for index, (result, name) in enumerate(zip(results, names)):
        row = result.table.iloc[0]
        values = [float(row[c]) * 1e3 if c in row and row[c] == row[c] else 0.0 for c in columns]
        axes.barh([i + index * width for i in range(len(columns))], values, width, color=palette(index % 10),
                  label=name)
    axes.set_yticks([i + width * (len(results) - 1) / 2 for i in range(len(columns))],
                    [c[len("exposed:"):] for c in columns], fontsize=8)
    axes.invert_yaxis()
    axes.set_xlabel("exposed (ms per step)")
    axes.grid(True, axis="x", alpha=0.35)
    axes.set_title("exposed communication by collective/group", fontsize=10)
    if len(results) > 1:
        axes.legend(fontsize=7.5, loc="best")


def _bar_names(labels, rows, results):
    """The pattern names when they tell the runs apart, else with each run's label."""
    patterns = [str(row.get("pattern", "") or "") for row in rows]
    if all(patterns) and len(set(patterns)) == len(patterns):
        return patterns
    return [" — ".join(part for part in (pattern, label) if part) or result.path
            for pattern, label, result in zip(patterns, labels, results)]
