"""docs/schema/records.schema.json is the one contract of the result columns: the column
tables of docs/output-format.md and the column lists of scripts/commbench_results are held
against it here (the C++ kinds in tests/unit/core/record_test.cpp, the files the commands
write in tests/integration/test_results.py). A column renamed, reordered, retyped or left
out in one of them fails, naming it.
"""
import ast
import json
import os
import re
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SCHEMA = os.path.join(ROOT, "docs", "schema", "records.schema.json")
OUTPUT_FORMAT = os.path.join(ROOT, "docs", "output-format.md")
READER = os.path.join(ROOT, "scripts", "commbench_results", "reader.py")
SOURCES = [os.path.join(ROOT, top) for top in ("src", "include", "examples")]

# The docs' words for a schema type, as the tables' Type column writes them.
DOC_TYPES = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean"}


def schema_kinds():
    with open(SCHEMA, encoding="utf-8") as f:
        return json.load(f)["$defs"]


def columns_of(kind):
    """(name, base type, nullable, unit) per column, in order."""
    columns = []
    for name, prop in kind["properties"].items():
        types = prop["type"] if isinstance(prop["type"], list) else [prop["type"]]
        base = [t for t in types if t != "null"]
        columns.append((name, base[0], "null" in types, prop.get("x-unit", "")))
    return columns


def doc_table(kind_name):
    """The rows of the table under the heading that names the kind's schema key, as
    (name, type text) in order: `| # | \`name\` | type | unit | meaning |`."""
    with open(OUTPUT_FORMAT, encoding="utf-8") as f:
        text = f.read()
    marker = f"<!-- columns: {kind_name} -->"
    start = text.find(marker)
    if start < 0:
        return None
    rows = []
    for line in text[start + len(marker):].lstrip("\n").splitlines():
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        match = re.fullmatch(r"`([a-z0-9_]+)`", cells[1]) if len(cells) > 2 else None
        if match and cells[0].isdigit():
            rows.append((match.group(1), cells[2]))
    return rows


def reader_tuples():
    with open(READER, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if isinstance(node.value, ast.Tuple) and all(isinstance(e, ast.Constant) for e in node.value.elts):
                found[node.targets[0].id] = [e.value for e in node.value.elts]
    return found


def reader_schema_versions():
    """KINDS of reader.py: schema family -> the versions scripts/plot and compare read."""
    with open(READER, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "KINDS":
            return {key.value: [e.value for e in value.elts[0].elts]
                    for key, value in zip(node.value.keys, node.value.values)}
    raise AssertionError("reader.py has no KINDS table")


def written_schemas():
    """(family, version, file) of every "commbench.<family>/<N>" literal in the C++ sources."""
    found = []
    for top in SOURCES:
        for directory, _, files in os.walk(top):
            for name in files:
                if not name.endswith((".cpp", ".hpp")):
                    continue
                path = os.path.join(directory, name)
                with open(path, encoding="utf-8") as f:
                    for family, version in re.findall(r'"(commbench\.[a-z-]+)/([0-9]+)"', f.read()):
                        found.append((family, int(version), os.path.relpath(path, ROOT)))
    return found


class RecordSchema(unittest.TestCase):
    def test_every_kind_names_its_document_key_and_requires_every_column(self):
        for name, kind in schema_kinds().items():
            with self.subTest(kind=name):
                self.assertTrue(kind.get("x-document-key"), name)
                self.assertEqual(kind["required"], list(kind["properties"]))
                for column, prop in kind["properties"].items():
                    self.assertTrue(prop.get("description"), f"{name}.{column} has no description")

    def test_the_docs_tables_list_each_kinds_columns_in_order_with_their_types(self):
        for name, kind in schema_kinds().items():
            with self.subTest(kind=name):
                table = doc_table(name)
                self.assertIsNotNone(table, f"docs/output-format.md has no '<!-- columns: {name} -->' table")
                expected = [column[0] for column in columns_of(kind)]
                self.assertEqual([row[0] for row in table], expected)
                for (column, base, nullable, _), (_, written) in zip(columns_of(kind), table):
                    self.assertTrue(written.startswith(DOC_TYPES[base]),
                                    f"{name}.{column}: the docs say '{written}', the schema {base}")
                    self.assertEqual("or empty" in written, nullable,
                                     f"{name}.{column}: the docs say '{written}', nullable is {nullable}")

    def test_the_python_reader_types_every_row_column_as_the_schema_does(self):
        lists = reader_tuples()
        by_type = {"string": set(lists["TEXT_COLUMNS"]), "integer": set(lists["INTEGER_COLUMNS"]),
                   "number": set(lists["NUMBER_COLUMNS"])}
        columns = columns_of(schema_kinds()["row"])
        self.assertEqual(sorted(set().union(*by_type.values())), sorted(c[0] for c in columns))
        for column, base, _, _ in columns:
            self.assertIn(column, by_type[base], f"reader.py does not read {column} as {base}")


class ReaderVersions(unittest.TestCase):
    def test_the_reader_reads_the_version_each_command_writes(self):
        # A JSON layout's version raised in C++ and not in reader.py makes scripts/plot
        # and compare refuse every new file of that command.
        versions = reader_schema_versions()
        written = written_schemas()
        self.assertIn("commbench.topology", {family for family, _, _ in written})
        for family, version, path in written:
            if family in versions:
                with self.subTest(schema=f"{family}/{version}"):
                    self.assertIn(version, versions[family],
                                  f"{path} writes {family}/{version}; scripts/commbench_results/reader.py reads "
                                  f"{versions[family]}")


if __name__ == "__main__":
    unittest.main()
