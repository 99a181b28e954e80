"""Every relative link in the README, in docs/ and in the results folders' READMEs leads to a
file of this repository (and, with a #fragment into a Markdown file, to one of its headings):
a reader who follows a figure to its evidence finds it. A link that leaves the repository is
as broken as one that leads nowhere, since a checkout elsewhere does not have it. Each
problem names the file, the line and the link; the Checks class shows each one is caught."""
import os
import re
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
README = os.path.join(ROOT, "README.md")
DOCS = os.path.join(ROOT, "docs")
RESULTS = os.path.join(ROOT, "results")

LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
CODE_SPAN = re.compile(r"`[^`]*`")


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


def inside(path, root):
    return os.path.commonpath([os.path.abspath(path), os.path.abspath(root)]) == os.path.abspath(root)


def broken_links(path, text, root=ROOT):
    """Relative links of a Markdown file that leave the repository, lead to no file, or to
    no heading of it."""
    problems = []
    folder = os.path.dirname(path)
    for number, line in prose_lines(text):
        for target in LINK.findall(CODE_SPAN.sub("", line)):
            if SCHEME.match(target):
                continue
            where, _, fragment = target.partition("#")
            resolved = os.path.normpath(os.path.join(folder, where)) if where else path
            name = f"{os.path.relpath(path, root)}:{number}: {target}"
            if not inside(resolved, root):
                problems.append(f"{name} (outside the repository)")
            elif not os.path.exists(resolved):
                problems.append(f"{name} (no such file)")
            elif fragment and resolved.endswith(".md") and fragment not in anchors(read(resolved)):
                problems.append(f"{name} (no heading '{fragment}' in {os.path.relpath(resolved, root)})")
    return problems


def markdown_files(root=ROOT):
    """README.md, docs/*.md and every README.md under results/."""
    yield os.path.join(root, "README.md")
    docs = os.path.join(root, "docs")
    for name in sorted(os.listdir(docs)):
        if name.endswith(".md"):
            yield os.path.join(docs, name)
    for folder, subfolders, files in os.walk(os.path.join(root, "results")):
        subfolders.sort()
        if "README.md" in files:
            yield os.path.join(folder, "README.md")


class DocLinks(unittest.TestCase):
    def test_every_relative_link_leads_to_a_file_of_the_repository(self):
        problems = []
        for path in markdown_files():
            problems += broken_links(path, read(path))
        self.assertEqual(problems, [])


class Checks(unittest.TestCase):
    """Each check above fails on text that breaks it."""

    def test_the_results_readmes_are_read(self):
        found = [os.path.relpath(p, ROOT) for p in markdown_files()]
        self.assertIn("README.md", found)
        self.assertIn(os.path.join("docs", "performance.md"), found)
        self.assertIn(os.path.join("results", "gpu", "README.md"), found)
        self.assertIn(os.path.join("results", "mpi-host-2core", "small-message-phases", "README.md"), found)

    def test_a_link_to_nothing_is_named(self):
        text = "[ok](docs/methodology.md) [gone](docs/no-such-page.md) `[code](not/a/link.md)`\n" \
               "```\n[fenced](not/a/link.md)\n```\n[web](https://example.org/x.md)\n"
        self.assertEqual(broken_links(README, text), ["README.md:1: docs/no-such-page.md (no such file)"])

    def test_a_link_out_of_the_repository_is_named(self):
        path = os.path.join(DOCS, "performance.md")
        text = "[ok](../results/gpu/README.md)\n[beside](../../shared/evidence/x.md) [abs](/etc/hostname)\n"
        self.assertEqual(broken_links(path, text),
                         ["docs/performance.md:2: ../../shared/evidence/x.md (outside the repository)",
                          "docs/performance.md:2: /etc/hostname (outside the repository)"])

    def test_a_link_from_a_results_readme_is_read_from_its_folder(self):
        path = os.path.join(RESULTS, "gpu", "README.md")
        text = "[ok](../../docs/performance.md) [gone](../docs/performance.md)\n"
        self.assertEqual(broken_links(path, text),
                         ["results/gpu/README.md:1: ../docs/performance.md (no such file)"])

    def test_a_link_to_a_missing_heading_is_named(self):
        text = "[ok](docs/methodology.md#why-a-measurement-stopped) [gone](docs/methodology.md#no-such-part)\n"
        self.assertEqual(broken_links(README, text),
                         ["README.md:1: docs/methodology.md#no-such-part (no heading 'no-such-part' in docs/methodology.md)"])

    def test_anchors_follow_github(self):
        text = "# bench-p2p: which link is slow\n## Reading `algbw` and busbw\n## Notes\n## Notes\n"
        self.assertEqual(anchors(text), {"bench-p2p-which-link-is-slow", "reading-algbw-and-busbw", "notes", "notes-1"})


if __name__ == "__main__":
    unittest.main()
