"""Which figure each kind of result file gets, and saving it. A later command's kind
(patterns, p2p, validation) adds its builder to BUILDERS."""
import os

from .collectives_figure import build_collectives_figure
from .command_line import write_whole
from .errors import InputError
from .patterns_figure import build_patterns_figure
from .replay_figure import build_replay_figure
from .soak_figure import build_soak_figure
from .topology_figure import build_links_figure, build_topology_figure

BUILDERS = {
    "collectives": build_collectives_figure,
    "topology": build_topology_figure,
    "topology-links": build_links_figure,
    "patterns": build_patterns_figure,
    "soak": build_soak_figure,
    "replay": build_replay_figure,
}
FORMATS = (".png", ".svg")


def build_figure(results, fabric=None, **options):
    """One figure of files of one kind; files of different kinds do not share axes. `fabric`
    (a collectives result) is the curve a replay's calls are drawn over."""
    kinds = list(dict.fromkeys(r.kind for r in results))
    if len(kinds) > 1:
        other = next(r for r in results if r.kind != kinds[0])
        raise InputError(other.path, 1, f"a {other.kind} file cannot share a plot with {kinds[0]} files "
                         f"({results[0].path}); plot them separately")
    for result in results:
        if result.table.empty:
            raise InputError(result.path, 1,
                             "no rows to plot (a run interrupted before its first row, or a node with no link to draw)")
    if fabric is not None and kinds[0] != "replay":
        raise InputError(fabric.path, 1, f"--fabric draws a bench-replay file's calls over it, not {kinds[0]} files")
    if fabric is not None and fabric.kind != "collectives":
        raise InputError(fabric.path, 1, f"--fabric needs a bench-collectives result, not a {fabric.kind} file")
    builder = BUILDERS[kinds[0]]
    if kinds[0] == "collectives":
        return builder(results, **options)
    return builder(results, fabric) if kinds[0] == "replay" else builder(results)


def save_figure(figure, path):
    extension = os.path.splitext(path)[1].lower()
    if extension not in FORMATS:
        raise ValueError(f"{path}: unknown picture format '{extension}' (use .png or .svg)")
    # dpi matters for PNG only; 150 keeps 8-point legend text sharp. Written whole or not at all.
    write_whole(path, lambda f: figure.savefig(f, dpi=150, format=extension[1:], metadata=_metadata(extension)))


def _metadata(extension):
    # No creation date: the same results give the same file (reviewable in git).
    return {"Software": "commbench scripts/plot"} if extension == ".png" else {"Date": None}
