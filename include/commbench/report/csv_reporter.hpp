// Tidy CSV: a header of row_columns() and the run's extra columns, and one line per
// measurement, written and flushed as each row is measured, so an interrupted run keeps
// every row it finished.
#pragma once

#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "commbench/report/reporter.hpp"

namespace commbench {

// One CSV line (without newline) of the given fields; strings are quoted when needed
// (csv_escape), empty values stay empty, doubles keep 9 significant digits.
std::string csv_line(const std::vector<Field>& fields);
std::string csv_header(std::span<const std::string> extra_columns = {});
// The row's fields in the header's order: the fixed columns, then each declared extra
// column (empty where the row lacks it). A row field that was not declared is an
// internal error (BackendError): it would shift every later column.
std::vector<Field> fields_in_columns(const ResultRow& row, std::span<const std::string> extra_columns);

// A failed write (a full disk) is a BackendError naming `label` ("--csv FILE"): the run
// must not go on as if its rows were kept.
class CsvReporter final : public Reporter {
 public:
  explicit CsvReporter(std::FILE* out, std::string label = "<stdout>") : out_(out), label_(std::move(label)) {}
  void begin(const RunContext& context) override;
  void add_row(const ResultRow& row) override;
  void finish(const RunSummary&) override {}

 private:
  std::FILE* out_;
  std::string label_;
  std::vector<std::string> extra_columns_;
};

}  // namespace commbench
