"""Reads any commbench result file into a ResultFile: what kind it is, its provenance and
its rows as a pandas DataFrame.

The kind comes from the file itself, never from its name: a JSON document names its
layout in `schema` ("commbench.collectives/2"), a CSV is recognised by its header. Each
kind has one reader in KINDS; a later command (patterns, p2p, validation) adds its schema
family and reader there, and a figure builder in figures.py.

Every problem is an InputError naming the file and the line, because the user's next step
is to open the file there.
"""
import csv
import io
import json
import math
import os
import re
from dataclasses import dataclass, field

import pandas

from .csv_comments import PROVENANCE_KEYS, provenance_from_comments
from .errors import InputError

# Columns of bench-collectives' rows (docs/output-format.md), by type. Files are read by
# column name, so older files (commbench.collectives/1 lacks achievable_busbw_gbps and the
# later appended columns) read the same way: a missing optional column is empty.
TEXT_COLUMNS = ("backend", "op", "placement", "dtype", "redop", "slowest_host", "threshold", "stop_reason",
                "nccl_algo", "nccl_proto", "nccl_channels", "nccl_split", "model_algo")
INTEGER_COLUMNS = ("root", "bytes", "count", "ranks", "nodes", "iterations", "samples", "slowest_rank", "wrong")
NUMBER_COLUMNS = ("time_us", "time_min_us", "time_mean_us", "p50_us", "p99_us", "noise", "algbw_gbps",
                  "busbw_gbps", "theoretical_busbw_gbps", "achievable_busbw_gbps", "efficiency")
# What a plot or a comparison cannot do without.
REQUIRED_COLUMNS = ("op", "placement", "dtype", "bytes", "ranks", "time_us", "algbw_gbps", "busbw_gbps")
ROW_COLUMNS = TEXT_COLUMNS + INTEGER_COLUMNS + NUMBER_COLUMNS

TOPOLOGY_LINKS_HEADER = ["host", "from", "to", "type", "count", "spec_gbps", "state"]



@dataclass
class ResultFile:
    path: str
    kind: str                # "collectives", "topology", "topology-links", "patterns", "soak" or "replay"
    schema: str              # the JSON's schema string, or "csv:<kind>" for a CSV
    provenance: dict = field(default_factory=dict)
    table: pandas.DataFrame = None  # one row per result row, plus `line`: where it is in the file
    complete: bool = True
    extra: dict = field(default_factory=dict)  # a kind's own sections (a soak's events and settings)


# ---------------------------------------------------------------------------------------
# Entry point


def read_result(path):
    text = _read_text(path)
    if not text.strip():
        raise InputError(path, 1, "empty file: no header and no rows")
    if text.lstrip().startswith("{"):
        return _read_json(path, text)
    if text.lstrip().startswith("["):
        raise InputError(path, 1, "a JSON array: not a commbench result (a JSON object with a \"schema\")")
    return _read_csv(path, text)


def _read_text(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise InputError(path, None, e.strerror or str(e)) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(path, data.count(b"\n", 0, e.start) + 1, "not UTF-8 text") from None


# ---------------------------------------------------------------------------------------
# JSON: dispatch on the schema family ("commbench.collectives") and check its version.


def _read_collectives_document(path, text, doc):
    typed = [_typed_row(path, line, row, json_values=True) for line, row in _objects_with_lines(path, text, doc, "rows")]
    provenance = _provenance_of(doc)
    return ResultFile(path, "collectives", doc["schema"], provenance, _rows_table(path, typed),
                      complete=doc.get("complete", True) is not False)


def _read_topology_document(path, text, doc):
    records = []
    for line, entry in _objects_with_lines(path, text, doc, "theoretical_busbw"):
        if not isinstance(entry.get("collective"), str):
            raise InputError(path, line, "a theoretical_busbw entry needs a 'collective' name")
        record = {"collective": entry["collective"], "line": line}
        for key in ("nodes", "ranks_per_node", "spec_busbw_gbps", "achievable_busbw_gbps"):
            value = entry.get(key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
                raise InputError(path, line, f"'{key}' must be a number or null, not {json.dumps(value)}")
            record[key] = value
        record["basis"] = entry.get("basis", "")
        records.append(record)
    provenance = _provenance_of(doc)
    provenance.setdefault("rank_hosts", [n.get("hostname", "") for n in doc.get("nodes", []) if isinstance(n, dict)])
    table = pandas.DataFrame.from_records(
        records, columns=["collective", "nodes", "ranks_per_node", "spec_busbw_gbps", "achievable_busbw_gbps",
                          "basis", "line"])
    return ResultFile(path, "topology", doc["schema"], provenance, table)


def _objects_with_lines(path, text, doc, key):
    """(line, object) for each element of the array doc[key], checked to be objects."""
    elements = doc.get(key)
    if not isinstance(elements, list):
        raise InputError(path, _key_line(text, key), f"'{key}' must be an array of objects")
    lines = _array_element_lines(text, key)
    for index, element in enumerate(elements):
        line = lines[index] if index < len(lines) else 1
        if not isinstance(element, dict):
            raise InputError(path, line, f"element {index + 1} of '{key}' is not an object")
        yield line, element


# A bench-patterns step's parts (docs/patterns.md): seconds of the mean measured step.
STEP_KEYS = ("step_seconds", "compute_seconds", "communication_busy_seconds", "exposed_seconds",
             "unattributed_exposed_seconds")


def _read_patterns_document(path, text, doc):
    """One row: the run's mean step split into its parts, and each collective type's
    exposed time (columns `exposed:<type>`), so runs and tuning trials stack side by side."""
    step = doc.get("mean_step")
    line = _key_line(text, "mean_step")
    if not isinstance(step, dict):
        raise InputError(path, line, "'mean_step' must be an object")
    record = {"line": line}
    for key in STEP_KEYS:
        value = step.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or value < 0:
            raise InputError(path, line, f"mean_step.{key} must be a non-negative number, not {json.dumps(value)}")
        record[key] = float(value)
    for type_line, entry in _objects_with_lines(path, text, doc, "types"):
        label, exposed = entry.get("type"), entry.get("exposed_seconds")
        if not isinstance(label, str) or isinstance(exposed, bool) or not isinstance(exposed, (int, float)):
            raise InputError(path, type_line, "a types entry needs a 'type' name and 'exposed_seconds'")
        record["exposed:" + label] = float(exposed)
    pattern = doc.get("pattern") if isinstance(doc.get("pattern"), dict) else {}
    record["pattern"] = str(pattern.get("pattern", pattern.get("kind", "")) or
                            _provenance_of(doc).get("settings", {}).get("pattern", ""))
    return ResultFile(path, "patterns", doc["schema"], _provenance_of(doc), pandas.DataFrame.from_records([record]))


def _read_validate_document(path, text, doc):
    """A soak (bench-validate --soak): its pair readings, with the events and the soak's
    settings beside them. The plan's document has no timeline to draw."""
    if not isinstance(doc.get("soak"), dict):
        raise InputError(path, 1, "a bench-validate plan has nothing to plot over time; "
                         "plot the JSON of a soak (bench-validate --soak)")
    records = []
    for line, record in _objects_with_lines(path, text, doc, "intervals"):
        if record.get("what") != "pair":
            continue
        gbps, start = record.get("gbps"), record.get("start_s")
        if isinstance(gbps, bool) or not isinstance(gbps, (int, float)) or not isinstance(start, (int, float)):
            raise InputError(path, line, "a pair interval needs numbers 'start_s' and 'gbps'")
        records.append({"line": line, "start_s": float(start), "gbps": float(gbps),
                        "node_a": str(record.get("node_a", "")), "node_b": str(record.get("node_b", ""))})
    events = [event for _, event in _objects_with_lines(path, text, doc, "events")]
    for event in events:
        if not all(isinstance(event.get(key), (int, float)) for key in ("start_s", "end_s", "depth")):
            raise InputError(path, _key_line(text, "events"), "an event needs numbers 'start_s', 'end_s' and 'depth'")
    table = pandas.DataFrame.from_records(records, columns=["line", "start_s", "gbps", "node_a", "node_b"])
    return ResultFile(path, "soak", doc["schema"], _provenance_of(doc), table, bool(doc.get("complete", True)),
                      {"soak": doc["soak"], "events": events})


REPLAY_NUMBERS = ("bytes", "group_ranks", "calls", "seconds", "busbw_gbps", "fabric_busbw_gbps")


def _read_replay_document(path, text, doc):
    """bench-replay: one row per class of the job's calls (op, dtype, size, group) with its
    busbw and, where the run had --fabric, the fabric's busbw at the same size."""
    records = []
    for line, entry in _objects_with_lines(path, text, doc, "collectives"):
        if not isinstance(entry.get("op"), str):
            raise InputError(path, line, "a collectives entry needs an 'op' name")
        record = {"line": line, "op": entry["op"], "dtype": str(entry.get("dtype") or "")}
        for key in REPLAY_NUMBERS:
            value = entry.get(key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
                raise InputError(path, line, f"'{key}' must be a number or null")
            record[key] = float(value) if value is not None else float("nan")
        # 0: a barrier; null (from version 3): a call the traces did not size.
        if entry.get("bytes") is not None and not record["bytes"] >= 0:
            raise InputError(path, line, "'bytes' must be a number, 0 or more, or null")
        records.append(record)
    table = pandas.DataFrame.from_records(records, columns=["line", "op", "dtype", *REPLAY_NUMBERS])
    fabric = doc.get("fabric") if isinstance(doc.get("fabric"), dict) else {}
    return ResultFile(path, "replay", doc["schema"], _provenance_of(doc), table, bool(doc.get("complete", True)),
                      {"fabric": fabric, "verdict": str(doc.get("verdict", ""))})


# schema family -> (versions this script reads, reader). Add a command's kind here.
KINDS = {
    "commbench.collectives": ((1, 2), _read_collectives_document),
    "commbench.groups": ((1,), _read_collectives_document),  # bench-groups: the same rows plus its own columns
    "commbench.topology": ((1, 2, 3), _read_topology_document),
    "commbench.patterns": ((1, 2), _read_patterns_document),
    "commbench.validate": ((1,), _read_validate_document),
    "commbench.replay": ((1, 2, 3), _read_replay_document),
}


def known_schemas():
    return ", ".join(f"{family}/{'|'.join(map(str, versions))}" for family, (versions, _) in KINDS.items())


def _read_json(path, text):
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(path, e.lineno, f"not valid JSON: {e.msg} (column {e.colno})") from None
    if not isinstance(doc, dict):
        raise InputError(path, 1, "a commbench JSON file is an object with a 'schema' key")
    schema = doc.get("schema")
    if not isinstance(schema, str):
        raise InputError(path, _key_line(text, "schema"), "no 'schema' string: not a commbench result file")
    family, _, version = schema.rpartition("/")
    if family not in KINDS:
        raise InputError(path, _key_line(text, "schema"),
                         f"unknown schema '{schema}' (this script reads {known_schemas()})")
    versions, reader = KINDS[family]
    if not version.isdigit() or int(version) not in versions:
        raise InputError(path, _key_line(text, "schema"),
                         f"schema '{schema}': this script reads versions {', '.join(map(str, versions))} of {family}")
    return reader(path, text, doc)


def _provenance_of(doc):
    # commbench.topology/1 kept the provenance keys at the top level.
    source = doc.get("provenance") if isinstance(doc.get("provenance"), dict) else doc
    provenance = {key: source[key] for key in PROVENANCE_KEYS if source.get(key) is not None}
    for count in ("ranks", "nodes"):  # topology/1's top-level `nodes` is the node list, not a count
        if not isinstance(provenance.get(count), int):
            provenance.pop(count, None)
    return provenance


def _key_line(text, key):
    match = re.search(r'(?<!\\)"%s"\s*:' % re.escape(key), text)
    return text.count("\n", 0, match.start()) + 1 if match else 1


_SPACE = re.compile(r"\s*")


def _array_element_lines(text, key):
    """The line on which each element of the array under `key` starts. Called on text that
    json.loads accepted, so the walk below cannot fail."""
    match = re.search(r'(?<!\\)"%s"\s*:\s*\[' % re.escape(key), text)
    if not match:
        return []
    decoder = json.JSONDecoder()
    position = match.end()
    line = text.count("\n", 0, position) + 1
    lines = []
    while True:
        start = _SPACE.match(text, position).end()
        line += text.count("\n", position, start)
        if text[start] == "]":
            return lines
        lines.append(line)
        _, end = decoder.raw_decode(text, start)
        line += text.count("\n", start, end)
        position = _SPACE.match(text, end).end()
        line += text.count("\n", end, position)
        if text[position] == ",":
            position += 1


# ---------------------------------------------------------------------------------------
# CSV: bench-collectives rows (any command's rows: extra columns are kept as text) or
# bench-topology's links. Lines starting with '#' are comments; those that look like the
# console header or `# key: value` supply provenance.


def _read_csv(path, text):
    comments, records = _csv_records(path, text)
    if not records:
        raise InputError(path, 1, "no CSV header: the file holds only comment lines")
    header_line, header = records[0]
    if header == TOPOLOGY_LINKS_HEADER:
        return _links_file(path, records)
    if "record" in header:
        raise InputError(path, header_line, "a CSV of mixed records (bench-patterns, bench-replay, bench-validate, a "
                         "soak): plot and compare read that run's --json")
    if "op" in header and "busbw_gbps" in header:
        return _collectives_csv(path, comments, records)
    raise InputError(path, header_line,
                     "not a commbench CSV: the header is neither bench-collectives' rows (op, bytes, busbw_gbps, ...) "
                     "nor bench-topology's links (" + ",".join(TOPOLOGY_LINKS_HEADER) + ")")


def _csv_records(path, text):
    comments, records = [], []
    reader = csv.reader(io.StringIO(text, newline=""))
    line = 1
    try:
        for fields in reader:
            if fields and fields[0].startswith("#"):
                comments.append(",".join(fields))
            elif fields:
                records.append((line, fields))
            line = reader.line_num + 1
    except csv.Error as e:
        raise InputError(path, reader.line_num, f"bad CSV: {e}") from None
    return comments, records


def _collectives_csv(path, comments, records):
    header_line, header = records[0]
    duplicates = {c for c in header if header.count(c) > 1}
    if duplicates:
        raise InputError(path, header_line, f"column '{sorted(duplicates)[0]}' appears twice in the header")
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise InputError(path, header_line, f"the header lacks column{'s' if len(missing) > 1 else ''} "
                         + ", ".join(missing))
    typed = []
    for line, fields in records[1:]:
        if len(fields) != len(header):
            raise InputError(path, line, f"{len(fields)} fields, but the header names {len(header)} columns")
        typed.append(_typed_row(path, line, dict(zip(header, fields)), json_values=False))
    table = _rows_table(path, typed)
    provenance = provenance_from_comments(comments)
    _fill_from_sibling_json(path, provenance, len(typed))
    _fill_from_rows(provenance, table)
    schema = "csv:collectives"
    return ResultFile(path, "collectives", schema, provenance, table)


def _links_file(path, records):
    rows = []
    for line, fields in records[1:]:
        if len(fields) != len(TOPOLOGY_LINKS_HEADER):
            raise InputError(path, line, f"{len(fields)} fields, but the header names {len(TOPOLOGY_LINKS_HEADER)}")
        row = dict(zip(TOPOLOGY_LINKS_HEADER, fields))
        for column in ("count", "spec_gbps"):
            row[column] = _number(path, line, column, row[column], integer=column == "count")
        row["line"] = line
        rows.append(row)
    table = pandas.DataFrame.from_records(rows, columns=TOPOLOGY_LINKS_HEADER + ["line"])
    provenance = {"program": "bench-topology", "rank_hosts": sorted(set(table["host"]))}
    return ResultFile(path, "topology-links", "csv:topology-links", provenance, table)


# ---------------------------------------------------------------------------------------
# Rows: one checked dict per row, whichever file it came from.


def _typed_row(path, line, raw, json_values):
    missing = [c for c in REQUIRED_COLUMNS if c not in raw]
    if missing:
        raise InputError(path, line, "the row lacks " + ", ".join(missing))
    row = {"line": line}
    for column, value in raw.items():
        if column in INTEGER_COLUMNS or column in NUMBER_COLUMNS:
            row[column] = _number(path, line, column, value, integer=column in INTEGER_COLUMNS,
                                  json_value=json_values)
        elif value is None or value == "":
            row[column] = None
        elif json_values and not isinstance(value, str):
            row[column] = json.dumps(value)  # a command's own column holding a number: kept as text
        else:
            row[column] = value
    for column in REQUIRED_COLUMNS:
        # A one-rank row has no busbw: nothing crosses a link.
        if row[column] is None and not (column == "busbw_gbps" and row.get("ranks") == 1):
            raise InputError(path, line, f"'{column}' is empty")
    for column in ("op", "placement", "dtype"):
        if not isinstance(row[column], str):
            raise InputError(path, line, f"'{column}' must be text")
    if row["bytes"] <= 0:
        raise InputError(path, line, f"'bytes' must be positive, not {row['bytes']}")
    if row["time_us"] <= 0:
        raise InputError(path, line, f"'time_us' must be positive, not {row['time_us']}")
    for column in ("algbw_gbps", "busbw_gbps", "noise"):
        if row.get(column) is not None and row[column] < 0:
            raise InputError(path, line, f"'{column}' must not be negative ({row[column]})")
    return row


def _number(path, line, column, value, integer, json_value=False):
    if value is None or value == "":
        return None
    if json_value:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InputError(path, line, f"'{column}' must be a number, not {json.dumps(value)}")
        number = value
    else:
        try:
            number = int(value) if integer else float(value)
        except ValueError:
            kind = "a whole number" if integer else "a number"
            raise InputError(path, line, f"'{column}' must be {kind}, not '{value}'") from None
    if integer and number != int(number):
        raise InputError(path, line, f"'{column}' must be a whole number, not {number}")
    if not math.isfinite(number):
        raise InputError(path, line, f"'{column}' must be finite, not {value}")
    return int(number) if integer else float(number)


def _rows_table(path, rows):
    extra = []
    for row in rows:
        extra += [c for c in row if c not in ROW_COLUMNS and c != "line" and c not in extra]
    table = pandas.DataFrame.from_records(rows, columns=list(ROW_COLUMNS) + extra + ["line"])
    # Integer columns with empty cells would become floats; keep them as objects so that
    # `root` 0 stays 0 and an empty root stays None.
    for column in INTEGER_COLUMNS:
        table[column] = pandas.Series([None if v is None or v != v else int(v) for v in table[column]],
                                      index=table.index, dtype=object)
    for column in TEXT_COLUMNS:
        table[column] = table[column].astype(object).where(table[column].notna(), None)
    for column in NUMBER_COLUMNS:  # empty cells become NaN, which matplotlib leaves out of a line
        table[column] = table[column].astype(float)
    return table


# ---------------------------------------------------------------------------------------
# Provenance of a CSV: comments (csv_comments.py), the JSON written beside it by the same run,
# the rows.


def _fill_from_sibling_json(path, provenance, row_count):
    """bench-collectives writes --csv and --json of one run side by side; the JSON holds the
    provenance the CSV has no room for. Used only when it is the same run (same rows)."""
    sibling = os.path.splitext(path)[0] + ".json"
    if sibling == path or not os.path.isfile(sibling):
        return
    try:
        with open(sibling, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return
    if not isinstance(doc, dict) or not str(doc.get("schema", "")).startswith("commbench.collectives/"):
        return
    if not isinstance(doc.get("rows"), list) or len(doc["rows"]) != row_count:
        return
    for key, value in _provenance_of(doc).items():
        provenance.setdefault(key, value)


def _fill_from_rows(provenance, table):
    if table.empty:
        return
    first = table.iloc[0]
    provenance.setdefault("backend", first["backend"])
    provenance.setdefault("ranks", first["ranks"])
    if first["nodes"] is not None:
        provenance.setdefault("nodes", first["nodes"])
    if "rank_hosts" not in provenance:
        hosts = sorted({h for h in table["slowest_host"] if h})
        if hosts:
            provenance["rank_hosts"] = hosts
