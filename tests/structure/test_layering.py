"""Lower layers never include higher ones: core knows only itself; topology, report,
validate and backend build on core; p2p (pair schedules, matrices and the matrix's
measurement) on the backend's peer rounds and the runner, and validate (bench-validate's
plan) on p2p's schedules; the runner on backend; pattern (bench-patterns' schedules and
their executor) on the runner and the bandwidth model; replay (a job's own traces) on core
alone; cli, the commands' shells, may use everything, and no layer uses cli.
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
    "cli": {"core", "backend", "runner", "topology", "report", "validate", "p2p", "pattern", "replay", "cli"},
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

    def test_strings_are_made_with_fmt(self):
        self.assertEqual(to_string_concatenations(), [])

    def test_the_concatenation_finder_sees_a_chain_over_lines(self):
        text = 'x = "a " + std::to_string(n) + "\n";\ny = std::to_string(a) +\n    "b";\nz = std::to_string(k);'
        self.assertEqual(len(TO_STRING_CONCATENATION.findall(text)), 2)


if __name__ == "__main__":
    unittest.main()
