"""A flag's name is written once: an option declared in src/cli or examples/ names its flag
in the names CLI11 reads ("-b,--min-bytes"), and its parser is handed the name its messages
use (include/commbench/cli/parsed_option.hpp). A declaration whose parser or message spells
the flag again ("parse_size(text, \\"-b/--min-bytes\\")") is named here, as is a direct
add_option_function, which would bypass the seam."""
import os
import re
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
FOLDERS = (os.path.join("src", "cli"), "examples")
SEAM = os.path.join("include", "commbench", "cli", "parsed_option.hpp")
DECLARERS = ("add_parsed_option", "add_named_option", "add_repeatable_option", "add_zero_or_one_switch",
             "add_name_list")
CALL = re.compile(r"\b(" + "|".join(DECLARERS + ("add_option_function",)) + r")\s*(?:<[^;()]*>)?\s*\(")
LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
NAME = r"!?-{1,2}[A-Za-z][\w-]*"
NAMES = re.compile(rf"^{NAME}(?:\s*,\s*{NAME})*$")


def display_name(names):
    """What flag_display_name (command_line_parser.cpp) makes of `names`."""
    each = [n.strip().lstrip("!") for n in names.split(",") if n.strip()]
    longs = [n for n in each if n.startswith("--")]
    if len(each[0]) == 2 and each[0].startswith("-") and longs:
        return f"{each[0]}/{longs[0]}"
    return each[0]


def call_text(text, open_paren):
    """The arguments of the call whose '(' is at `open_paren`, strings skipped over."""
    depth, at = 0, open_paren
    while at < len(text):
        char = text[at]
        if char == '"':
            at = LITERAL.match(text, at).end()
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return text[open_paren + 1:at]
        at += 1
    return text[open_paren + 1:]


def repeated_names(text, where):
    found = []
    for call in CALL.finditer(text):
        line = text.count("\n", 0, call.start()) + 1
        if call.group(1) == "add_option_function":
            found.append(f"{where}:{line}: add_option_function outside {SEAM}")
            continue
        literals = LITERAL.findall(call_text(text, call.end() - 1))
        names_at = next((i for i, literal in enumerate(literals) if NAMES.match(literal)), None)
        if names_at is None:
            continue  # a declaration of a declarer, or names passed on
        names = literals[names_at]
        spellings = {n.strip().lstrip("!") for n in names.split(",")} | {display_name(names)}
        for literal in literals[:names_at] + literals[names_at + 1:]:
            if any(literal == s or literal.startswith((s + ":", s + " ")) for s in spellings):
                found.append(f'{where}:{line}: {names} spelled again as "{literal}"')
    return found


def violations():
    found = []
    for folder in FOLDERS:
        for top, _, files in os.walk(os.path.join(ROOT, folder)):
            for name in sorted(files):
                if name.endswith((".cpp", ".hpp")):
                    path = os.path.join(top, name)
                    with open(path, encoding="utf-8") as f:
                        found += repeated_names(f.read(), os.path.relpath(path, ROOT))
    return found


class FlagNamesWrittenOnce(unittest.TestCase):
    def test_no_option_spells_its_flag_twice(self):
        self.assertEqual(violations(), [])

    def test_the_seam_is_there(self):
        with open(os.path.join(ROOT, SEAM), encoding="utf-8") as f:
            self.assertIn("flag_display_name(names)", f.read())

    def test_a_parser_naming_its_flag_is_found(self):
        text = ('add_parsed_option(\n  app, "-b,--min-bytes,--minbytes", options.min,\n'
                '  [](const std::string& text) { return parse_size(text, "-b/--min-bytes"); }, "Smallest", "SIZE");')
        self.assertEqual(repeated_names(text, "x.cpp"),
                         ['x.cpp:1: -b,--min-bytes,--minbytes spelled again as "-b/--min-bytes"'])

    def test_a_message_naming_its_flag_is_found(self):
        text = ('add_parsed_option(app, "--nodes", n, [](const std::string& t, const char*) {\n'
                '  throw UsageError(fmt::format("--nodes: at most {} (got {})", 9, t)); }, "Nodes", "N");')
        self.assertEqual(len(repeated_names(text, "x.cpp")), 1)

    def test_another_flag_in_the_description_is_not_a_repeat(self):
        text = 'add_parsed_option(app, "--methods", m, parse_copy_methods, "--local: how GPUs copy", "LIST");'
        self.assertEqual(repeated_names(text, "x.cpp"), [])

    def test_a_direct_add_option_function_is_found(self):
        text = 'app.add_option_function<std::string>("-b,--bytes", [](const std::string&) {}, "Size");'
        self.assertEqual(len(repeated_names(text, "x.cpp")), 1)

    def test_the_display_name_joins_a_short_name_to_the_long_one(self):
        self.assertEqual(display_name("-w,--warmup,--warmup-iters"), "-w/--warmup")
        self.assertEqual(display_name("--micro-batches,-M"), "--micro-batches")
        self.assertEqual(display_name("--backend"), "--backend")


if __name__ == "__main__":
    unittest.main()
