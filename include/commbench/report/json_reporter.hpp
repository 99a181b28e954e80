// JSON: provenance, every row and the summary, in one document. Written once at the end,
// to a temporary file that is renamed into place, so the file is either whole or absent.
#pragma once

#include <cstdio>
#include <memory>
#include <string>

#include "commbench/report/reporter.hpp"

namespace commbench {

class JsonReporter final : public Reporter {
 public:
  // Writes to `path` (atomically), or to `stream` when path is empty.
  JsonReporter(std::string path, std::FILE* stream);
  ~JsonReporter() override;
  void begin(const RunContext& context) override;
  void add_row(const ResultRow& row) override;
  void finish(const RunSummary& summary) override;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

inline constexpr const char* kJsonSchema = "commbench.collectives/2";

}  // namespace commbench
