"""The README is the front door: it stays short enough to read in a few minutes, keeps the
two set-up commands on its first screen, names only commands the build makes (and every
command it makes), and no link in it or in docs/ leads nowhere. Each check names what it
found wrong; the Checks class shows each one fails on text that breaks it."""
import os
import re
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
README = os.path.join(ROOT, "README.md")
DOCS = os.path.join(ROOT, "docs")
# Where the build declares its programs; a bench-* name the README uses must be one of them.
TARGET_FILES = (os.path.join(ROOT, "bench", "CMakeLists.txt"), os.path.join(ROOT, "examples", "CMakeLists.txt"))
SET_UP_COMMANDS = ("scripts/run.sh", "scripts/test.sh")
MAX_LINES = 200
FIRST_SCREEN_LINES = 40

ADD_EXECUTABLE = re.compile(r"^\s*add_executable\(\s*([A-Za-z0-9_.+-]+)", re.MULTILINE)
COMMAND = re.compile(r"(?<![\w/.-])bench-[a-z0-9]+(?:-[a-z0-9]+)*")
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def prose_lines(text):
    """The lines outside fenced code blocks, with their 1-based numbers."""
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield number, line


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


def slug(heading):
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`|\*\*|__", "", heading).strip().lower()
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text):
    found, seen = set(), {}
    for _, line in prose_lines(text):
        match = HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def broken_links(path, text, root=ROOT):
    """Relative links of a Markdown file that lead to no file, or to no heading of it."""
    problems = []
    folder = os.path.dirname(path)
    for number, line in prose_lines(text):
        for target in LINK.findall(re.sub(r"`[^`]*`", "", line)):
            if SCHEME.match(target):
                continue
            where, _, fragment = target.partition("#")
            resolved = os.path.normpath(os.path.join(folder, where)) if where else path
            name = f"{os.path.relpath(path, root)}:{number}: {target}"
            if not os.path.exists(resolved):
                problems.append(f"{name} (no such file)")
            elif fragment and resolved.endswith(".md") and fragment not in anchors(read(resolved)):
                problems.append(f"{name} (no heading '{fragment}' in {os.path.relpath(resolved, root)})")
    return problems


def markdown_files():
    yield README
    for name in sorted(os.listdir(DOCS)):
        if name.endswith(".md"):
            yield os.path.join(DOCS, name)


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

    def test_every_relative_link_leads_somewhere(self):
        problems = []
        for path in markdown_files():
            problems += broken_links(path, read(path))
        self.assertEqual(problems, [])


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

    def test_a_link_to_nothing_is_named(self):
        path = os.path.join(ROOT, "README.md")
        text = "[ok](docs/methodology.md) [gone](docs/no-such-page.md) `[code](not/a/link.md)`\n" \
               "```\n[fenced](not/a/link.md)\n```\n[web](https://example.org/x.md)\n"
        self.assertEqual(broken_links(path, text), ["README.md:1: docs/no-such-page.md (no such file)"])

    def test_a_link_to_a_missing_heading_is_named(self):
        path = os.path.join(ROOT, "README.md")
        text = "[ok](docs/methodology.md#why-a-measurement-stopped) [gone](docs/methodology.md#no-such-part)\n"
        self.assertEqual(broken_links(path, text),
                         ["README.md:1: docs/methodology.md#no-such-part (no heading 'no-such-part' in docs/methodology.md)"])

    def test_anchors_follow_github(self):
        text = "# bench-p2p: which link is slow\n## Reading `algbw` and busbw\n## Notes\n## Notes\n"
        self.assertEqual(anchors(text), {"bench-p2p-which-link-is-slow", "reading-algbw-and-busbw", "notes", "notes-1"})

    def test_a_long_readme_is_counted(self):
        self.assertEqual(too_long("line\n" * MAX_LINES), [])
        self.assertEqual(too_long("line\n" * (MAX_LINES + 1)), [f"README.md has 201 lines, more than {MAX_LINES}"])

    def test_a_set_up_command_below_the_first_screen_is_missed(self):
        text = "# x\nscripts/run.sh\n" + "text\n" * FIRST_SCREEN_LINES + "scripts/test.sh\n"
        self.assertEqual(set_up_commands_missing(text), ["scripts/test.sh"])


if __name__ == "__main__":
    unittest.main()
