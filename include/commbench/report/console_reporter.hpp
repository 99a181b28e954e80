// The human-readable table, in the spirit of nccl-tests: a '#' header naming the build,
// backend, library and rank placement, one line per measurement, and a summary.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "commbench/core/text_table.hpp"

#include "commbench/report/reporter.hpp"

namespace commbench {

class ConsoleReporter final : public Reporter {
 public:
  explicit ConsoleReporter(std::FILE* out) : out_(out) {}
  void begin(const RunContext& context) override;
  void add_row(const ResultRow& row) override;
  // Records of any other kind: one line each under a heading of the kind's column names
  // and units (what a command's own report, a matrix or a verdict, does not replace).
  void add_record(const Record& record) override;
  void finish(const RunSummary& summary) override;

 private:
  // Like the fprintf it replaced, a failed console write does not stop the run: the CSV
  // and JSON files are the record, the console is for watching.
  void write(const std::string& text) { std::fputs(text.c_str(), out_); }

  std::FILE* out_;
  std::optional<TextTable> kind_table_;     // for a kind other than "row"
  std::optional<TextTable> row_table_;      // for the row kind
  bool nccl_columns_ = false;               // the NCCL backend: what NCCL chose, beside the model's algorithm
  std::vector<std::string> extra_columns_;  // the command's own row fields, shown after the fixed columns
  std::size_t records_ = 0;
};

// "0-3 node01, 4-7 node02": consecutive ranks on one host folded into a range.
std::vector<std::string> rank_host_ranges(const std::vector<std::string>& rank_hosts);

}  // namespace commbench
