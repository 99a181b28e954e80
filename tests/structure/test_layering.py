"""Lower layers never include higher ones: core knows only itself; topology, report,
validate and backend build on core; p2p (pair schedules and matrices) on the backend's
peer rounds, and validate (bench-validate's plan) on p2p's schedules; the runner on
backend; pattern (bench-patterns' schedules and their executor) on the runner and the
bandwidth model; cli may use everything.
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
    "p2p": {"core", "backend", "p2p"},
    "backend": {"core", "backend"},
    "runner": {"core", "backend", "runner"},
    "pattern": {"core", "backend", "runner", "topology", "pattern"},
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


class Layering(unittest.TestCase):
    def test_every_layer_exists(self):
        for layer in ALLOWED:
            self.assertTrue(any(sources_of(layer)), layer)

    def test_no_layer_includes_a_higher_one(self):
        self.assertEqual(violations(), [])


if __name__ == "__main__":
    unittest.main()
