// Reporters turn recorded rows into text; they decide nothing. They are
// interchangeable: the console table, CSV and JSON all take the same three calls.
#pragma once

#include "commbench/core/result_row.hpp"
#include "commbench/report/run_context.hpp"

namespace commbench {

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual void begin(const RunContext& context) = 0;
  virtual void add_row(const ResultRow& row) = 0;
  virtual void finish(const RunSummary& summary) = 0;
};

}  // namespace commbench
