"""One concept per file, functions that fit on a screen: every C++ and Python file of the
tree (src/, include/, bench/, examples/, fuzz/, scripts/, tests/) has at most FILE_LIMIT
lines, and every function at most FUNCTION_LIMIT, signature included. Member functions
defined in a class body count as much as free ones, and the tests as much as the code.
A file or function over its limit fails here, named with its size; the fix is to split it
along its concepts, not to list it as an exception.
"""
import ast
import os
import re
import unittest
import warnings

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
FOLDERS = ("src", "include", "bench", "examples", "fuzz", "scripts", "tests")
CPP_SUFFIXES = (".hpp", ".cpp", ".cu", ".cuh", ".h", ".cc")
FILE_LIMIT = 500
FUNCTION_LIMIT = 80
# Nothing is exempt: a file or function that outgrows its limit is split, not listed.
KNOWN_LONG_FILES = {}
KNOWN_LONG_FUNCTIONS = {}


def blank_comments_and_literals(text):
    """The text with comments, string and character literals and preprocessor lines
    replaced by spaces; newlines stay, so offsets and line numbers are those of the text."""
    out = list(text)
    i, n = 0, len(text)

    def blank(start, end):
        for k in range(start, end):
            if out[k] != "\n":
                out[k] = " "

    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":
            end = i
            while end < n and (text[end] != "\n" or text[end - 1] == "\\"):
                end += 1
            blank(i, end)
            i = end
            continue
        if c == "\n":
            line_start = True
            i += 1
            continue
        if not c.isspace():
            line_start = False
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            blank(i, end)
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            blank(i, end)
            i = end
        elif c == '"' and re.search(r"(?:^|[^\w])(?:u8|u|U|L)?R$", text[max(0, i - 3):i]):
            delimiter = text[i + 1:text.find("(", i)]
            end = text.find(f"){delimiter}\"", i)
            end = n if end < 0 else end + len(delimiter) + 2
            blank(i, end)
            i = end
        elif c == '"' or (c == "'" and not is_digit_separator(text, i)):
            end = i + 1
            while end < n and text[end] != c and text[end] != "\n":
                end += 2 if text[end] == "\\" else 1
            blank(i, min(end + 1, n))
            i = end + 1
        else:
            i += 1
    return "".join(out)


def is_digit_separator(text, i):
    """A ' inside a number (1'000'000), not the start of a character literal."""
    start = i
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_'."):
        start -= 1
    return start < i and text[start].isdigit()


def matching(text, i, opening, closing):
    """The offset of the bracket that closes the one at i (len(text) when none does)."""
    depth = 0
    for k in range(i, len(text)):
        if text[k] == opening:
            depth += 1
        elif text[k] == closing:
            depth -= 1
            if depth == 0:
                return k
    return len(text)


NOT_A_FUNCTION_NAME = {"if", "for", "while", "switch", "catch", "return", "sizeof", "decltype",
                       "alignas", "alignof", "noexcept", "requires", "static_assert", "throw",
                       "__attribute__", "__declspec"}
NAME_BEFORE_PARAMETERS = re.compile(
    r"(operator\s*(?:\(\)|\[\]|[^\s\w(]+|\w[\w:<>\s]*?)|~?[A-Za-z_]\w*(?:\s*::\s*~?[A-Za-z_]\w*)*)"
    r"\s*(?:<[^(){};]*>)?\s*$")
QUALIFIERS = re.compile(
    r"^(?:\s*(?:const|volatile|noexcept(?:\s*\([^()]*\))?|override|final|mutable|&&|&|"
    r"throw\s*\(\s*\)|\[\[[^\]]*\]\]))*\s*(?:->.*)?$", re.DOTALL)
LEADING_NOISE = re.compile(
    r"^\s*(?:(?:public|private|protected)\s*:|\[\[[^\]]*\]\]|template\s*<[^{};]*?>\s*(?=[A-Za-z_\[])|"
    r"typedef\b)\s*")


def top_level_groups(header):
    """(open, close) of each parenthesised group of header that no other group encloses."""
    groups, i = [], 0
    while i < len(header):
        if header[i] == "(":
            close = matching(header, i, "(", ")")
            groups.append((i, close))
            i = close + 1
        elif header[i] == "{":
            i = matching(header, i, "{", "}") + 1
        else:
            i += 1
    return groups


def function_name(header):
    """The name a header of a brace defines as a function, or None when the brace opens
    something else (a class, a namespace, a brace initialiser, a table of data)."""
    for open_, close in top_level_groups(header):
        match = NAME_BEFORE_PARAMETERS.search(header[:open_])
        if not match or match.group(1) in NOT_A_FUNCTION_NAME:
            continue
        before = header[:match.start()]
        if re.search(r"(?<![=!<>])=(?!=)", before.replace("operator", "")):
            return None
        suffix = header[close + 1:]
        stripped = suffix.strip()
        if QUALIFIERS.match(suffix) or re.match(r"requires\b", stripped):
            name = re.sub(r"\s+", "", match.group(1))
            if name.isupper() or name.startswith("TEST"):
                arguments = re.sub(r"\s+", " ", header[open_ + 1:close].strip())
                name = f"{name}({arguments})"
            return name
        if re.match(r":(?!:)", stripped):
            # A constructor's initialiser list: its body follows a ")" or "}", a brace
            # after a member's name initialises that member.
            return re.sub(r"\s+", "", match.group(1)) if header.rstrip()[-1:] in (")", "}") else None
    return None


def scope_kind(header):
    """'scope' for a namespace, extern "C" or class body (definitions inside are measured),
    'function' for a function body, 'data' for anything else."""
    rest = header
    while True:
        stripped = LEADING_NOISE.sub("", rest, count=1)
        if stripped == rest:
            break
        rest = stripped
    rest = rest.strip()
    if re.match(r"(?:inline\s+)?namespace\b|extern\s*$", rest):
        return "scope", None
    if re.match(r"(?:class|struct|union)\b", rest) and "=" not in rest and "(" not in rest.split(":")[0]:
        return "scope", None
    if re.match(r"enum\b", rest):
        return "data", None
    name = function_name(rest)
    return ("function", name) if name else ("data", None)


def function_sizes(text):
    """(name, first line, lines) of every function defined at namespace or class scope in
    C++ text: from the first line of its signature (template line and attributes included)
    to its closing brace."""
    code = blank_comments_and_literals(text)
    found = []

    def scan(start, end):
        statement, i, parentheses = start, start, 0
        while i < end:
            c = code[i]
            if c == "(":
                parentheses += 1
            elif c == ")":
                parentheses -= 1
            elif c == ";" and parentheses == 0:
                statement = i + 1
            elif c == "{":
                close = matching(code, i, "{", "}")
                if parentheses != 0:
                    i = close + 1
                    continue
                header = code[statement:i]
                kind, name = scope_kind(header)
                if kind == "scope":
                    scan(i + 1, close)
                    statement = close + 1
                elif kind == "function":
                    first = statement + len(header) - len(without_access_specifiers(header))
                    found.append((name, code.count("\n", 0, first) + 1,
                                  code.count("\n", first, min(close, len(code) - 1)) + 1))
                    statement = close + 1
                i = close + 1
                continue
            elif c == "}":
                statement = i + 1
            i += 1

    scan(0, len(code))
    return found


def without_access_specifiers(header):
    """header without the access specifiers and white space that precede its signature."""
    rest = header
    while True:
        stripped = re.sub(r"^\s*(?:(?:public|private|protected)\s*:)?\s*", "", rest, count=1)
        if stripped == rest:
            return rest
        rest = stripped


def python_function_sizes(text):
    """(name, first line, lines) of every def of Python text, methods and nested ones
    included, decorators counted with the function."""
    found = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            found.append((node.name, first, node.end_lineno - first + 1))
    return found


def is_python(path):
    if path.endswith(".py"):
        return True
    if os.path.splitext(path)[1]:
        return False
    try:
        with open(path, "rb") as f:
            return re.match(rb"#!.*python", f.readline()) is not None
    except OSError:
        return False


def source_files():
    """(relative path, 'cpp' or 'python') of every source file in FOLDERS."""
    for top in FOLDERS:
        for folder, subfolders, files in os.walk(os.path.join(ROOT, top)):
            subfolders[:] = sorted(s for s in subfolders if s not in ("__pycache__", ".git"))
            for name in sorted(files):
                path = os.path.join(folder, name)
                relative = os.path.relpath(path, ROOT)
                if name.endswith(CPP_SUFFIXES):
                    yield relative, "cpp"
                elif is_python(path):
                    yield relative, "python"


def line_count(text):
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


def size_violations():
    found = []
    for relative, language in source_files():
        with open(os.path.join(ROOT, relative), encoding="utf-8", errors="replace") as f:
            text = f.read()
        count, limit = line_count(text), KNOWN_LONG_FILES.get(relative, FILE_LIMIT)
        if count > limit:
            found.append(f"{relative}: {count} lines (at most {limit})")
        sizes = function_sizes(text) if language == "cpp" else python_function_sizes(text)
        for name, first, length in sizes:
            limit = KNOWN_LONG_FUNCTIONS.get((relative, name), FUNCTION_LIMIT)
            if length > limit:
                found.append(f"{relative}:{first}: {name} is {length} lines (at most {limit})")
    return found


class Sizes(unittest.TestCase):
    def test_files_and_functions_fit_their_limits(self):
        self.assertEqual(size_violations(), [])

    def test_nothing_is_exempt(self):
        self.assertEqual((KNOWN_LONG_FILES, KNOWN_LONG_FUNCTIONS), ({}, {}))

    def test_every_folder_is_measured(self):
        languages = {}
        for relative, language in source_files():
            languages.setdefault(relative.split(os.sep)[0], set()).add(language)
        self.assertEqual(languages["tests"], {"cpp", "python"})
        self.assertEqual(languages["scripts"], {"python"})
        for top in ("src", "include", "examples", "fuzz"):
            self.assertIn("cpp", languages[top], top)
        self.assertIn(os.path.join("scripts", "plot"), dict(source_files()))


class FunctionFinder(unittest.TestCase):
    def sizes(self, lines):
        return [(name, first, length) for name, first, length in function_sizes("\n".join(lines))]

    def test_a_free_function_is_measured_from_its_signature(self):
        lines = ["namespace x {", "", "// why", "int f(int a,", "      int b) {", "  return a;", "}", "",
                 "constexpr int table[] = {", "  1,", "};", "void g() {", "}", "}  // namespace x"]
        self.assertEqual(self.sizes(lines), [("f", 4, 4), ("g", 12, 2)])

    def test_a_member_function_in_a_class_body_is_measured(self):
        lines = ["class Reader {", " public:", "  explicit Reader(int n) : n_(n) {}",
                 "  [[nodiscard]] int next() const noexcept {", "    return n_;", "  }",
                 " private:", "  int n_{0};", "  std::vector<int> seen_ = {1, 2};", "};"]
        self.assertEqual(self.sizes(lines), [("Reader", 3, 1), ("next", 4, 3)])

    def test_a_nested_class_and_a_template_are_measured(self):
        lines = ["namespace a::b {", "template <typename T>", "struct Outer : Base<T> {",
                 "  struct Inner {", "    auto size() const -> std::size_t {", "      return 1;", "    }",
                 "  };", "  bool operator==(const Outer&) const = default;",
                 "  void operator()(int k) {", "    k++;", "  }", "};", "}"]
        self.assertEqual(self.sizes(lines), [("size", 5, 3), ("operator()", 10, 3)])

    def test_a_constructor_with_braced_initialisers_is_one_function(self):
        lines = ["Pool::Pool(int size, std::string name)", "    : size_{size},", "      name_(std::move(name)),",
                 "      ready_{} {", "  start();", "}"]
        self.assertEqual(self.sizes(lines), [("Pool::Pool", 1, 6)])

    def test_braces_in_strings_comments_and_lambdas_do_not_end_a_body(self):
        lines = ['void f() {', '  auto s = "}{ \\" }";', "  char c = '}';", "  // } a closing brace",
                 "  /* { */ auto r = R\"x(}})x\";", "  int n = 1'000;", "  auto g = [&](int k) {", "    return k;",
                 "  };", "  if (n) { g(n); }", "}", "TEST(Reader, ReadsALine) {", "  EXPECT_EQ(1, 1);", "}"]
        self.assertEqual(self.sizes(lines), [("f", 1, 11), ("TEST(Reader, ReadsALine)", 12, 3)])

    def test_data_and_declarations_are_not_functions(self):
        lines = ["enum class Kind { a, b };", "const auto kCheck = [](int k) {", "  return k;", "};",
                 "std::function<void()> hook_{};", 'extern "C" {', "int plain(void) {", "  return 0;", "}", "}",
                 "#define WRAP(x) { x }", "struct Options options{};", "void declared(int k);",
                 'extern "C" int entry(int k) {', "  return k;", "}"]
        self.assertEqual(self.sizes(lines), [("plain", 7, 3), ("entry", 14, 3)])

    def test_python_functions_and_methods_are_measured_with_their_decorators(self):
        text = "class A:\n    @staticmethod\n    def f():\n        def g():\n            pass\n        return 1\n"
        self.assertEqual(sorted(python_function_sizes(text)), [("f", 2, 5), ("g", 4, 2)])


if __name__ == "__main__":
    unittest.main()
