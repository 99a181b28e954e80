"""A single-file HTML report: the plot as inline SVG, each run's provenance and its rows.
No scripts, fonts or style sheets from elsewhere, so it reads the same offline and as a mail
attachment; matplotlib's SVG draws text as paths, so it needs no fonts either."""
import html
import io
import math

from .command_line import write_whole
from .provenance import describe_run, run_labels
from .sizes import size_label

STYLE = """
body { font-family: sans-serif; margin: 1.5em; color: #222; max-width: 1200px; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
figure { margin: 0; } figure svg { max-width: 100%; height: auto; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: right; }
th { background: #f0f0f0; } td.text, th.key { text-align: left; }
table.provenance td { text-align: left; max-width: 60em; overflow-wrap: anywhere; }
tr.wrong td { background: #fdd; }
"""

# Columns of the rows table per kind: (heading, column, how to show it).
COLLECTIVE_COLUMNS = (
    ("op", "op", str), ("dtype", "dtype", str), ("place", "placement", str), ("redop", "redop", str),
    ("root", "root", str), ("size", "bytes", size_label), ("ranks", "ranks", str),
    ("time (µs)", "time_us", lambda v: f"{v:.4g}"), ("noise (%)", "noise", lambda v: f"{v * 100:.2f}"),
    ("algbw (GB/s)", "algbw_gbps", lambda v: f"{v:.4g}"), ("busbw (GB/s)", "busbw_gbps", lambda v: f"{v:.4g}"),
    ("theoretical (GB/s)", "theoretical_busbw_gbps", lambda v: f"{v:.4g}"),
    ("efficiency (%)", "efficiency", lambda v: f"{v * 100:.1f}"), ("wrong", "wrong", str),
    ("threshold", "threshold", str), ("stopped by", "stop_reason", str),
)
def _ms(seconds):
    return f"{seconds * 1e3:.4g}"


# bench-patterns: the mean step's parts, then each collective type's exposed time.
PATTERN_COLUMNS = (
    ("pattern", "pattern", str), ("step (ms)", "step_seconds", _ms), ("compute (ms)", "compute_seconds", _ms),
    ("communication busy (ms)", "communication_busy_seconds", _ms), ("exposed (ms)", "exposed_seconds", _ms),
    ("nothing running (ms)", "unattributed_exposed_seconds", _ms),
)
# bench-replay: each class of the job's calls, and the fabric's busbw at its size.
REPLAY_COLUMNS = (
    ("op", "op", str), ("dtype", "dtype", str), ("size", "bytes", size_label),
    ("group", "group_ranks", lambda v: f"{v:.0f}"), ("calls", "calls", lambda v: f"{v:.0f}"),
    ("time per call (ms)", "seconds", _ms), ("busbw (GB/s)", "busbw_gbps", lambda v: f"{v:.4g}"),
    ("fabric busbw (GB/s)", "fabric_busbw_gbps", lambda v: f"{v:.4g}"),
)
TEXT_CELLS = {"pattern", "op", "dtype", "placement", "redop", "stop_reason", "threshold", "collective", "basis", "host", "from",
              "to", "type", "state", "nccl_algo", "nccl_proto", "nccl_channels", "nccl_split", "model_algo"}


def write_html_report(results, figure, path):
    text = render_html_report(results, figure).encode("utf-8")
    write_whole(path, lambda f: f.write(text))


def render_html_report(results, figure):
    labels = run_labels(results)
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>{_e(_heading(results))}</title><style>{STYLE}</style></head><body>",
             f"<h1>{_e(_heading(results))}</h1>",
             "".join(f"<p>{_e(describe_run(r.provenance) or r.path)}</p>" for r in results),
             f'<figure id="plot">{_inline_svg(figure)}</figure>']
    for label, result in zip(labels, results):
        name = f"{label} — {result.path}" if label else result.path
        parts.append(f"<h2>{_e(name)}</h2>")
        parts.append(_provenance_table(result))
        parts.append(_rows_table(result))
    parts.append("</body></html>")
    return "\n".join(parts)


def _heading(results):
    program = results[0].provenance.get("program", "commbench")
    return f"commbench report: {program}" + (f", {len(results)} runs" if len(results) > 1 else "")


def _inline_svg(figure):
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None})
    svg = buffer.getvalue()
    return svg[svg.index("<svg"):]  # drop the XML prolog and the DOCTYPE's DTD address


def _provenance_table(result):
    p = result.provenance
    rows = [("file", result.path), ("schema", result.schema), ("run", describe_run(p))]
    if not result.complete:
        rows.append(("complete", "no: interrupted, the rows measured before are all here"))
    for key in ("program", "version", "commit", "command_line", "started_at", "backend_version", "mpi_version"):
        if p.get(key):
            rows.append((key, str(p[key])))
    for device in p.get("devices", []):
        rows.append(("device", device))
    if isinstance(p.get("settings"), dict):
        rows.append(("settings", " ".join(f"{k}={v}" for k, v in p["settings"].items())))
    for note in p.get("notes", []):
        rows.append(("note", note))
    cells = "".join(f'<tr><th class="key">{_e(k)}</th><td>{_e(v)}</td></tr>' for k, v in rows)
    return f'<table class="provenance">{cells}</table>'


def _rows_table(result):
    table = result.table
    if result.kind == "collectives":
        columns = [c for c in COLLECTIVE_COLUMNS if c[1] in table.columns]
    elif result.kind == "replay":
        columns = [c for c in REPLAY_COLUMNS if c[1] in table.columns]
    elif result.kind == "patterns":
        columns = [c for c in PATTERN_COLUMNS if c[1] in table.columns]
        columns += [(f"exposed {c[len('exposed:'):]} (ms)", c, _ms) for c in table.columns if c.startswith("exposed:")]
    else:
        columns = [(c, c, str) for c in table.columns if c != "line"]
    head = "".join(f"<th>{_e(heading)}</th>" for heading, _, _ in columns)
    body = []
    for record in table.to_dict("records"):
        wrong = record.get("wrong") not in (None, 0)
        cells = "".join(_cell(record.get(column), show, column) for _, column, show in columns)
        body.append(f'<tr{" class=wrong" if wrong else ""}>{cells}</tr>')
    return f'<table class="rows"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


def _cell(value, show, column):
    empty = value is None or (isinstance(value, float) and math.isnan(value))
    text = "-" if empty else show(value)
    css = ' class="text"' if column in TEXT_CELLS else ""
    return f"<td{css}>{_e(text)}</td>"


def _e(text):
    return html.escape(str(text))
