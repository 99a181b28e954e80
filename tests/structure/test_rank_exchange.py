"""Values travel between ranks typed (backend/typed_exchange.hpp: all_gather_as and
broadcast_as), never as text of the sender's own making. Bootstrap's raw methods, those that
move std::string payloads (all_gather and broadcast), are the typed exchange's carrier: only
the backend calls them. A call anywhere else fails here, naming the file and line, so a
number sent as text, a list joined by commas or newlines, or JSON parsed by the receiver
does not come back.
"""
import os
import re
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
# The backend itself: Bootstrap's implementations, the typed exchange, and their tests.
BACKEND = (
    os.path.join("src", "backend"),
    os.path.join("include", "commbench", "backend"),
    os.path.join("tests", "unit", "backend"),
)
SOURCE_TOPS = ("src", "include", "tests", "examples", "bench", "fuzz", "tools")
SOURCE_ENDINGS = (".hpp", ".cpp", ".cu", ".h")
RAW_METHODS = ("all_gather", "broadcast")
# A member call: `group.all_gather(`, `world_->broadcast(`, `session.world().broadcast(`.
RAW_CALL = re.compile(r"(?:\.|->)\s*(" + "|".join(RAW_METHODS) + r")\s*\(")
LINE_COMMENT = re.compile(r"//.*$")


def in_backend(relative):
    return any(relative == top or relative.startswith(top + os.sep) for top in BACKEND)


def sources():
    for top in SOURCE_TOPS:
        for folder, _, names in os.walk(os.path.join(ROOT, top)):
            for name in names:
                if name.endswith(SOURCE_ENDINGS):
                    path = os.path.join(folder, name)
                    relative = os.path.relpath(path, ROOT)
                    if not in_backend(relative):
                        yield relative, path


def raw_calls_in(text):
    """(line, method) of every raw exchange call in C++ `text`, comments aside."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        for match in RAW_CALL.finditer(LINE_COMMENT.sub("", line)):
            found.append((number, match.group(1)))
    return found


def raw_calls():
    found = []
    for relative, path in sources():
        with open(path, encoding="utf-8", errors="replace") as f:
            for line, method in raw_calls_in(f.read()):
                found.append(f"{relative}:{line}: Bootstrap::{method} outside the backend "
                             f"(use all_gather_as / broadcast_as from commbench/backend/typed_exchange.hpp)")
    return found


class RankExchange(unittest.TestCase):
    def test_only_the_backend_moves_raw_strings_between_ranks(self):
        self.assertEqual(raw_calls(), [])

    def test_the_check_sees_each_kind_of_call(self):
        text = ("const auto all = group.all_gather(mine);\n"
                "// world.broadcast(text, 0) in a comment is no call\n"
                "where = world_->broadcast (where, 0);\n"
                "apply(session.world().broadcast(text, 0));\n"
                "const auto typed = all_gather_as(group, mine);\n"
                "ops = {Collective::broadcast};\n")
        self.assertEqual(raw_calls_in(text), [(1, "all_gather"), (3, "broadcast"), (4, "broadcast")])

    def test_the_backend_is_exempt_and_nothing_else(self):
        self.assertTrue(in_backend(os.path.join("src", "backend", "mpi", "mpi_bootstrap.cpp")))
        self.assertTrue(in_backend(os.path.join("include", "commbench", "backend", "typed_exchange.hpp")))
        self.assertFalse(in_backend(os.path.join("src", "backend_tools", "x.cpp")))
        self.assertFalse(in_backend(os.path.join("src", "cli", "nic_watch.cpp")))


if __name__ == "__main__":
    unittest.main()
