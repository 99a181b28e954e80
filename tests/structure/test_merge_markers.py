"""No file in the tree carries a merge's conflict markers. Git accepts them when the file
is added, a build does not notice them in docs or scripts, and one merge of this project
committed them into docs/architecture.md; this names the file and line instead."""
import os
import re
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
TOP_LEVEL = ("include", "src", "tests", "docs", "scripts", "bench", "examples", "fuzz", "cmake", "results", ".ci")
MARKER = re.compile(r"^(<{7} |>{7} |={7}$)", re.MULTILINE)
TEXT_ENDINGS = (".hpp", ".cpp", ".cu", ".h", ".py", ".md", ".txt", ".sh", ".cmake", ".in", ".json", ".csv", ".xml")


def files_to_read():
    yield os.path.join(ROOT, "README.md")
    yield os.path.join(ROOT, "CMakeLists.txt")
    for top in TOP_LEVEL:
        for folder, _, names in os.walk(os.path.join(ROOT, top)):
            for name in names:
                if name.endswith(TEXT_ENDINGS) or "." not in name:
                    yield os.path.join(folder, name)


def markers():
    found = []
    for path in files_to_read():
        try:
            with open(path, encoding="utf-8", errors="strict") as f:
                text = f.read()
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue  # binary files and dangling names carry no markers to read
        for match in MARKER.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.append(f"{os.path.relpath(path, ROOT)}:{line}: {match.group(0).strip()}")
    return found


class MergeMarkers(unittest.TestCase):
    def test_no_conflict_markers(self):
        self.assertEqual(markers(), [])

    def test_the_check_sees_a_marker(self):
        self.assertTrue(MARKER.search("text\n<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> branch\n"))


if __name__ == "__main__":
    unittest.main()
