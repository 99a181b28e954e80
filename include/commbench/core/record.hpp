// One result model for every command: a record is of a kind (a collectives row, a p2p
// cell, a validation check, ...) and holds one value per column of that kind. A column
// has a name, a type and a unit, so the CSV and JSON reporters render any kind without
// code of the command's own (nvbench's named summaries with hints, google/benchmark's
// counters). The kinds and their columns are a contract: docs/schema/records.schema.json
// states the same columns, docs/output-format.md describes them, and tests hold the
// three equal.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "commbench/core/result_row.hpp"

namespace commbench {

// How a value is written: text is quoted in CSV when it must be; a boolean is kept as
// 0/1 and written `true`/`false` in both CSV and JSON.
enum class ValueType { text, integer, number, boolean };

struct Column {
  std::string_view name;
  ValueType type;
  std::string_view unit;  // "bytes", "us", "GB/s", "fraction", "rank", ...; empty when none
  bool nullable;          // an empty CSV cell / JSON null is allowed
  int digits = 9;         // significant digits of a number in CSV (JSON keeps full precision)
};

struct RecordKind {
  std::string_view name;    // "row", "cell", "check"
  std::string_view plural;  // the JSON document's key of the records: "rows", "cells", "checks"
  std::span<const Column> columns;
};

// Every kind a command emits; the schema test walks this list.
std::span<const RecordKind* const> record_kinds();
// The kind of that name; BackendError (an internal error) when there is none.
const RecordKind& record_kind(std::string_view name);

struct Record {
  const RecordKind* kind = nullptr;
  std::vector<FieldValue> values;  // one per kind->columns, in order; monostate is empty
  std::vector<ExtraField> extra;   // a command's own fields after the fixed columns (row only)
};

// Values as records hold them: a count as an integer, a figure that may be missing as
// empty (monostate) when it is.
inline FieldValue whole_value(std::uint64_t value) { return static_cast<std::int64_t>(value); }
inline FieldValue optional_value(const std::optional<double>& value) {
  return value ? FieldValue{*value} : FieldValue{std::monostate{}};
}

// The record's fields in column order, then its extra fields (names point into the kind's
// table and the record: keep both alive while the fields are used).
std::vector<Field> record_fields(const Record& record);

// A collectives row as a record of kind "row".
Record row_record(const ResultRow& row);

// A value as one CSV cell of `column`: empty for none, quoted text, booleans as
// true/false, numbers with the column's significant digits.
std::string csv_cell(const FieldValue& value, const Column& column);

// The header of a CSV of one record kind: its columns, then the declared extra columns.
std::string csv_header(const RecordKind& kind, std::span<const std::string> extra_columns = {});
// One CSV line (without newline) of a record in that header's order; BackendError (an
// internal error) when the record is of another kind or has an undeclared extra field,
// which would shift every later column.
std::string csv_record_line(const Record& record, const RecordKind& kind,
                            std::span<const std::string> extra_columns = {});

// A CSV of several kinds (bench-patterns' steps and collective types): a leading `record`
// column names each line's kind, then the kinds' columns in order, a name two kinds share
// being one column, then the declared extra columns. A line leaves the columns of other
// kinds empty.
std::vector<std::string_view> mixed_csv_columns(std::span<const RecordKind* const> kinds);
std::string mixed_csv_header(std::span<const RecordKind* const> kinds, std::span<const std::string> extra_columns = {});
// BackendError (an internal error) for a record of a kind not in `kinds`.
std::string mixed_csv_record_line(const Record& record, std::span<const RecordKind* const> kinds,
                                  std::span<const std::string> extra_columns = {});

}  // namespace commbench
