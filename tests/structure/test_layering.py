"""Lower layers never include higher ones: core knows only itself; topology, report,
validate and backend build on core; p2p (pair schedules, matrices and the matrix's
measurement) on the backend's peer rounds and the runner, and validate (bench-validate's
plan) on p2p's schedules; the runner on backend; pattern (bench-patterns' schedules and
their executor) on the runner and the bandwidth model; replay (a job's own traces, every
format) on core alone; analysis (what joins the domains: a job's trace against the
fabric, tuning, soak events, the cost models) on every domain; cli, the command shell,
on everything, and each of its files uses the shell (CLI11, the command shell or the job
session): what does not is analysis or a domain's, and belongs there. No file's includes
go round in a circle.
A header of a higher layer in a lower one (the CSV reporter in the topology matrix, as
before) fails here, naming the file and the include.
"""
import os
import re
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
ALLOWED = {
    "core": {"core"},
    "topology": {"core", "topology"},
    "report": {"core", "report"},
    "validate": {"core", "validate", "p2p"},
    "p2p": {"core", "backend", "runner", "p2p"},
    "backend": {"core", "backend"},
    "runner": {"core", "backend", "runner"},
    "pattern": {"core", "backend", "runner", "topology", "pattern"},
    "replay": {"core", "replay"},
    "analysis": {"core", "backend", "runner", "topology", "report", "validate", "p2p", "pattern", "replay",
                 "analysis"},
    "cli": {"core", "backend", "runner", "topology", "report", "validate", "p2p", "pattern", "replay", "analysis",
            "cli"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"commbench/([a-z0-9_]+)/', re.MULTILINE)


def sources_of(layer):
    for top in (os.path.join(ROOT, "src", layer), os.path.join(ROOT, "include", "commbench", layer)):
        for folder, _, files in os.walk(top):
            for name in files:
                if name.endswith((".hpp", ".cpp", ".cu", ".h")):
                    yield os.path.join(folder, name)


def violations():
    found = []
    for layer, allowed in ALLOWED.items():
        for path in sources_of(layer):
            with open(path, encoding="utf-8", errors="replace") as f:
                for included in INCLUDE.findall(f.read()):
                    if included not in allowed:
                        found.append(f"{os.path.relpath(path, ROOT)} includes commbench/{included}/")
    return found


# What makes a file of cli part of the shell: it declares options (CLI11) or reads their
# values, runs a command (the command shell, the job session, the job's watch) or is one
# of those.
SHELL_HEADERS = ("CLI/CLI.hpp", "commbench/cli/flag_values.hpp", "commbench/cli/command_shell.hpp",
                 "commbench/cli/job_session.hpp", "commbench/cli/job_command.hpp", "commbench/cli/job_watch.hpp", "command_line_parser.hpp",
                 "pattern_flag_parsers.hpp")
ANY_INCLUDE = re.compile(r'^\s*#\s*include\s+[<"]([^">]+)[">]', re.MULTILINE)


def includes_of(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return ANY_INCLUDE.findall(f.read())


def cli_files_without_the_shell():
    """Files of cli (a source with its own header, taken together) that use no part of the shell."""
    rooms = {}
    for path in sources_of("cli"):
        rooms.setdefault(os.path.splitext(os.path.basename(path))[0], []).append(path)
    found = []
    for stem, paths in sorted(rooms.items()):
        included = [name for path in paths for name in includes_of(path)]
        own = {f"commbench/cli/{stem}.hpp", f"{stem}.hpp"}
        if not any(name.endswith(SHELL_HEADERS) or name in SHELL_HEADERS for name in included if name not in own) and \
                f"commbench/cli/{stem}.hpp" not in SHELL_HEADERS and f"{stem}.hpp" not in SHELL_HEADERS:
            found.append(os.path.relpath(paths[0], ROOT))
    return found


def include_graph():
    """Each file of src/ and include/ with the files of the tree it includes."""
    graph = {}
    for layer in ALLOWED:
        for path in sources_of(layer):
            folder = os.path.dirname(path)
            edges = graph.setdefault(os.path.relpath(path, ROOT), set())
            for name in includes_of(path):
                target = os.path.join(ROOT, "include", name) if name.startswith("commbench/") else \
                    os.path.join(folder, name)
                if os.path.exists(target):
                    edges.add(os.path.relpath(os.path.normpath(target), ROOT))
    return graph


def include_circles(graph):
    """Every set of files whose includes lead from each to each (Tarjan's algorithm), of two or more."""
    index, low, stack, on_stack, circles = {}, {}, [], set(), []

    def visit(room):
        index[room] = low[room] = len(index)
        stack.append(room)
        on_stack.add(room)
        for other in sorted(graph.get(room, ())):
            if other not in index:
                visit(other)
                low[room] = min(low[room], low[other])
            elif other in on_stack:
                low[room] = min(low[room], index[other])
        if low[room] == index[room]:
            circle = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                circle.append(member)
                if member == room:
                    break
            if len(circle) > 1:
                circles.append(sorted(circle))

    for room in sorted(graph):
        if room not in index:
            visit(room)
    return circles


# Strings are made with {fmt}: one fmt::format call, not a chain of "text " +
# std::to_string(x) + " more". Searched on whole-file text, so a chain split over lines is
# found too.
TO_STRING_CONCATENATION = re.compile(r'"\s*\+\s*std::to_string|std::to_string\([^;]*?\)\s*\+\s*"')


def to_string_concatenations():
    found = []
    for top in (os.path.join(ROOT, "src"), os.path.join(ROOT, "include")):
        for folder, _, files in os.walk(top):
            for name in sorted(files):
                if not name.endswith((".hpp", ".cpp", ".cu")):
                    continue
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = f.read()
                for match in TO_STRING_CONCATENATION.finditer(text):
                    line = text.count("\n", 0, match.start()) + 1
                    found.append(f"{os.path.relpath(path, ROOT)}:{line}: use fmt::format, not + std::to_string")
    return found


class Layering(unittest.TestCase):
    def test_every_layer_exists(self):
        for layer in ALLOWED:
            self.assertTrue(any(sources_of(layer)), layer)

    def test_no_layer_includes_a_higher_one(self):
        self.assertEqual(violations(), [])

    def test_every_file_of_cli_uses_the_shell(self):
        self.assertEqual(cli_files_without_the_shell(), [])

    def test_no_includes_go_round_in_a_circle(self):
        self.assertEqual(include_circles(include_graph()), [])

    def test_the_circle_finder_finds_a_circle(self):
        graph = {"a/x": {"a/y"}, "a/y": {"a/z"}, "a/z": {"a/x"}, "a/w": {"a/x"}}
        self.assertEqual(include_circles(graph), [["a/x", "a/y", "a/z"]])

    def test_strings_are_made_with_fmt(self):
        self.assertEqual(to_string_concatenations(), [])

    def test_the_concatenation_finder_sees_a_chain_over_lines(self):
        text = 'x = "a " + std::to_string(n) + "\n";\ny = std::to_string(a) +\n    "b";\nz = std::to_string(k);'
        self.assertEqual(len(TO_STRING_CONCATENATION.findall(text)), 2)


if __name__ == "__main__":
    unittest.main()
