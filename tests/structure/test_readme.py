"""The README is the front door: it stays short enough to read in a few minutes, keeps the
two set-up commands on its first screen, and names only commands the build makes (and every
command it makes). Its links are checked with the docs' (test_doc_links.py). Each check
names what it found wrong; the Checks class shows each one fails on text that breaks it."""
import os
import re
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
README = os.path.join(ROOT, "README.md")
# Where the build declares its programs; a bench-* name the README uses must be one of them.
TARGET_FILES = (os.path.join(ROOT, "bench", "CMakeLists.txt"), os.path.join(ROOT, "examples", "CMakeLists.txt"))
SET_UP_COMMANDS = ("scripts/run.sh", "scripts/test.sh")
MAX_LINES = 200
FIRST_SCREEN_LINES = 40

ADD_EXECUTABLE = re.compile(r"^\s*add_executable\(\s*([A-Za-z0-9_.+-]+)", re.MULTILINE)
COMMAND = re.compile(r"(?<![\w/.-])bench-[a-z0-9]+(?:-[a-z0-9]+)*")


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def too_long(text):
    lines = len(text.splitlines())
    return [f"README.md has {lines} lines, more than {MAX_LINES}"] if lines > MAX_LINES else []


def set_up_commands_missing(text):
    """The set-up commands that are not on the first screen (outside it they are missed)."""
    first_screen = "\n".join(text.splitlines()[:FIRST_SCREEN_LINES])
    return [command for command in SET_UP_COMMANDS if command not in first_screen]


def build_targets():
    targets = set()
    for path in TARGET_FILES:
        targets.update(ADD_EXECUTABLE.findall(read(path)))
    return targets


def command_names(text):
    return set(COMMAND.findall(text))


def unknown_commands(text, targets):
    return sorted(command_names(text) - targets)


def unmentioned_commands(text, targets):
    return sorted(t for t in targets if t.startswith("bench-") and t not in command_names(text))


class Readme(unittest.TestCase):
    def test_at_most_200_lines(self):
        self.assertEqual(too_long(read(README)), [])

    def test_the_set_up_commands_are_on_the_first_screen(self):
        self.assertEqual(set_up_commands_missing(read(README)), [],
                         f"not in the first {FIRST_SCREEN_LINES} lines of README.md")

    def test_every_command_it_names_is_built(self):
        self.assertEqual(unknown_commands(read(README), build_targets()), [])

    def test_every_command_built_is_named(self):
        self.assertEqual(unmentioned_commands(read(README), build_targets()), [])


class Checks(unittest.TestCase):
    """Each check above fails on text that breaks it."""

    def test_the_targets_are_read(self):
        self.assertTrue({"bench-collectives", "bench-groups"} <= build_targets())

    def test_an_unknown_command_is_named(self):
        text = "Run `bench-collectives`, then bench-speedup --fast; see slurm/bench-topology.sbatch."
        self.assertEqual(unknown_commands(text, {"bench-collectives", "bench-topology"}), ["bench-speedup"])

    def test_a_missing_command_is_named(self):
        self.assertEqual(unmentioned_commands("only bench-collectives", {"bench-collectives", "bench-p2p", "bare-mpi-loop"}),
                         ["bench-p2p"])

    def test_a_long_readme_is_counted(self):
        self.assertEqual(too_long("line\n" * MAX_LINES), [])
        self.assertEqual(too_long("line\n" * (MAX_LINES + 1)), [f"README.md has 201 lines, more than {MAX_LINES}"])

    def test_a_set_up_command_below_the_first_screen_is_missed(self):
        text = "# x\nscripts/run.sh\n" + "text\n" * FIRST_SCREEN_LINES + "scripts/test.sh\n"
        self.assertEqual(set_up_commands_missing(text), ["scripts/test.sh"])


if __name__ == "__main__":
    unittest.main()
