"""The command registry (src/cli/command_registry.cpp) is the one list of the programs
commbench installs: each has its thin main under bench/ running its own entry, a manual
under docs/, a row in the README's command table linking that manual, and a place in the
package test's programs. A command added in one place and not the others fails here.
"""
import os
import re
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def read(*parts):
    with open(os.path.join(ROOT, *parts), encoding="utf-8") as f:
        return f.read()


def registry():
    """(name, doc) of each RegisteredCommand, in order."""
    return re.findall(r'RegisteredCommand\{"([a-z0-9-]+)", "([^"]+)", run_[a-z0-9_]+\}',
                      read("src", "cli", "command_registry.cpp"))


class CommandRegistry(unittest.TestCase):
    def test_the_registry_lists_the_installed_programs(self):
        names = [name for name, _ in registry()]
        self.assertEqual(len(names), 6, names)
        installed = re.search(r"install\(TARGETS ([^)]*) RUNTIME", read("bench", "CMakeLists.txt")).group(1).split()
        self.assertEqual(sorted(installed), sorted(names))
        package = re.search(r"COMMANDS = \(([^)]*)\)", read("tests", "integration", "test_package.py")).group(1)
        self.assertEqual(sorted(re.findall(r'"([a-z0-9-]+)"', package)), sorted(names))

    def test_each_main_runs_its_own_entry(self):
        for name, _ in registry():
            with self.subTest(command=name):
                main = read("bench", name.replace("-", "_") + ".cpp")
                self.assertIn(f'run_registered_command("{name}", argc, argv)', main)

    def test_each_command_has_its_manual_and_a_readme_row(self):
        readme = read("README.md")
        for name, doc in registry():
            with self.subTest(command=name):
                self.assertTrue(os.path.isfile(os.path.join(ROOT, doc)), doc)
                row = re.search(r"^\| `%s` \|.*\|$" % re.escape(name), readme, re.MULTILINE)
                self.assertIsNotNone(row, f"README.md's command table has no row for {name}")
                self.assertIn(f"]({doc})", row.group(0))


if __name__ == "__main__":
    unittest.main()
