// Tidy CSV: a header of the run's record kind's columns and its extra columns (a run of
// several kinds: a leading `record` column, then every kind's columns), and one line per
// record, written and flushed as each arrives, so an interrupted run keeps every
// record it finished.
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


// A failed write (a full disk) is a BackendError naming `label` ("--csv FILE"): the run
// must not go on as if its rows were kept.
class CsvReporter final : public Reporter {
 public:
  explicit CsvReporter(std::FILE* out, std::string label = "<stdout>") : out_(out), label_(std::move(label)) {}
  void begin(const RunContext& context) override;
  void add_record(const Record& record) override;
  void finish(const RunSummary&) override {}

 private:
  std::FILE* out_;
  std::string label_;
  const RecordKind* kind_ = &record_kind("row");  // until begin() names the run's kind
  std::vector<const RecordKind*> mixed_kinds_;     // a run of several kinds
  std::string constant_cells_;                     // ",value" of each setting, with settings_in_csv
  std::string leading_cells_;                      // "value," of each, with settings_lead_csv
  std::vector<std::string> extra_columns_;
};

}  // namespace commbench
