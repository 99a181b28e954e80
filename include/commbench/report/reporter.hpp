// Reporters turn records into text; they decide nothing. They are interchangeable: the
// console table, CSV and JSON all take the same three calls, and CSV and JSON render any
// record kind (core/record.hpp) from its columns alone.
#pragma once

#include "commbench/core/record.hpp"
#include "commbench/core/result_row.hpp"
#include "commbench/report/run_context.hpp"

namespace commbench {

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual void begin(const RunContext& context) = 0;
  // A record of any kind. The CSV holds the run's kind (RunContext::record_kind) only.
  virtual void add_record(const Record& record) = 0;
  // A collectives row: the console prints it as its table's line, the files as a record.
  virtual void add_row(const ResultRow& row) { add_record(row_record(row)); }
  virtual void finish(const RunSummary& summary) = 0;
};

}  // namespace commbench
