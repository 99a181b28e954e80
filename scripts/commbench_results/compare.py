"""Comparing two runs row by row: which cases got slower beyond what noise explains.

A row's bandwidth change is base time / new time - 1 (the same for algbw and busbw, since
the two rows move the same bytes on the same ranks). It counts only when it exceeds the
row's threshold, max(tolerance, noise_factor x combined noise), where the combined noise is
sqrt(noise_base^2 + noise_new^2): each row's `noise` is the relative standard error of its
mean time, so this is the standard error of the difference (docs/plots.md, "The rule").
"""
import math
from dataclasses import dataclass, field

from .errors import InputError
from .sizes import size_label

DEFAULT_TOLERANCE = 0.05
DEFAULT_NOISE_FACTOR = 3.0
MATCH_KEYS = ("op", "dtype", "placement", "redop", "root", "bytes", "ranks")

REGRESSION, WRONG, FASTER, SAME = "REGRESSION", "WRONG", "faster", "same"


@dataclass
class Change:
    key: tuple
    base: dict
    new: dict
    change: float            # relative bandwidth change: -0.2 = 20 % less bandwidth
    threshold: float         # what |change| must exceed to count
    noise: float             # combined noise, or None when a row has none (fewer than 2 samples)
    verdict: str


@dataclass
class Comparison:
    changes: list = field(default_factory=list)
    only_in_baseline: list = field(default_factory=list)   # rows (dicts) without a partner
    only_in_new: list = field(default_factory=list)

    def regressions(self):
        return [c for c in self.changes if c.verdict in (REGRESSION, WRONG)]


def compare_results(baseline, new, tolerance=DEFAULT_TOLERANCE, noise_factor=DEFAULT_NOISE_FACTOR):
    for result in (baseline, new):
        if result.kind != "collectives":
            raise InputError(result.path, 1, f"compare reads bench-collectives results; this is a {result.kind} file")
    base_rows, new_rows = _rows_by_key(baseline), _rows_by_key(new)
    comparison = Comparison()
    for key, base in base_rows.items():
        if key in new_rows:
            comparison.changes.append(_change(key, base, new_rows[key], tolerance, noise_factor))
        else:
            comparison.only_in_baseline.append(base)
    comparison.only_in_new = [row for key, row in new_rows.items() if key not in base_rows]
    return comparison


def _rows_by_key(result):
    rows = {}
    for row in result.table.to_dict("records"):
        key = tuple(_plain(row.get(k)) for k in MATCH_KEYS)
        if key in rows:
            raise InputError(result.path, row["line"], f"a second row for {case_text(rows[key])} (first on line "
                             f"{rows[key]['line']}): compare needs one row per case")
        rows[key] = row
    return rows


def _plain(value):
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def _change(key, base, new, tolerance, noise_factor):
    change = base["time_us"] / new["time_us"] - 1
    noises = [_plain(base.get("noise")), _plain(new.get("noise"))]
    noise = math.hypot(*noises) if None not in noises else None
    threshold = max(tolerance, noise_factor * noise) if noise is not None else tolerance
    if (_plain(new.get("wrong")) or 0) > 0:
        verdict = WRONG  # a wrong result is worse than a slow one, whatever the timing says
    elif change < -threshold:
        verdict = REGRESSION
    elif change > threshold:
        verdict = FASTER
    else:
        verdict = SAME
    return Change(key, base, new, change, threshold, noise, verdict)


def case_text(row):
    parts = [row["op"], row["dtype"], row["placement"], _plain(row.get("redop")),
             f"root {row['root']}" if _plain(row.get("root")) is not None else None,
             size_label(row["bytes"]), f"{row['ranks']} ranks"]
    return " ".join(str(p) for p in parts if p is not None)


# ---------------------------------------------------------------------------------------
# Text


def render_comparison(comparison, baseline_path, new_path, changes_only=False):
    heading = ("op", "dtype", "place", "redop", "root", "size", "ranks", "busbw before", "busbw after", "change",
               "threshold", "verdict")
    lines = []
    shown = [c for c in comparison.changes if not changes_only or c.verdict != SAME]
    table = [heading] + [_change_cells(c) for c in shown]
    widths = [max(len(row[i]) for row in table) for i in range(len(heading))]
    for row in table:
        lines.append("  ".join(cell.rjust(w) if i >= 5 else cell.ljust(w) for i, (cell, w) in
                               enumerate(zip(row, widths))).rstrip())
    for title, rows, path in (("only in the baseline", comparison.only_in_baseline, baseline_path),
                              ("only in the new run", comparison.only_in_new, new_path)):
        for row in rows:
            lines.append(f"unmatched, {title}: {case_text(row)} ({path}:{row['line']})")
    lines.append(summary_line(comparison))
    return "\n".join(lines) + "\n"


def _change_cells(c):
    base, new = c.base, c.new
    noise = "" if c.noise is not None else " (no noise figure)"
    return (str(base["op"]), str(base["dtype"]), str(base["placement"]), str(_plain(base.get("redop")) or "-"),
            "-" if _plain(base.get("root")) is None else str(base["root"]), size_label(base["bytes"]),
            str(base["ranks"]), f"{base['busbw_gbps']:.4g}", f"{new['busbw_gbps']:.4g}", f"{c.change * 100:+.1f}%",
            f"±{c.threshold * 100:.1f}%{noise}", c.verdict + (f" ({new['wrong']} wrong elements)" if c.verdict == WRONG
                                                              else ""))


def summary_line(comparison):
    count = {v: sum(1 for c in comparison.changes if c.verdict == v) for v in (REGRESSION, WRONG, FASTER, SAME)}
    text = (f"compare: {len(comparison.changes)} matched rows: {count[REGRESSION]} regression"
            f"{'s' if count[REGRESSION] != 1 else ''}, {count[WRONG]} with wrong results, {count[FASTER]} faster, "
            f"{count[SAME]} within threshold")
    unmatched = len(comparison.only_in_baseline) + len(comparison.only_in_new)
    if unmatched:
        text += (f"; {unmatched} unmatched ({len(comparison.only_in_baseline)} only in the baseline, "
                 f"{len(comparison.only_in_new)} only in the new run)")
    return text
