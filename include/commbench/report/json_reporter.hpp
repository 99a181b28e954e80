// JSON: provenance, every record (under its kind's key: "rows", "cells", "checks"), the
// summary and the command's own sections, in one document. Written once at the end of
// the run however it ends (complete: false when it was interrupted), to a temporary file
// that is renamed into place, so the file is either whole or absent.
#pragma once

#include <cstdio>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "commbench/core/record.hpp"
#include "commbench/report/reporter.hpp"

namespace commbench {

// One record as the document holds it: an object of its columns (and extra fields).
nlohmann::ordered_json record_json(const Record& record);

class JsonReporter final : public Reporter {
 public:
  // Writes to `path` (atomically), or to `stream` when path is empty.
  JsonReporter(std::string path, std::FILE* stream);
  ~JsonReporter() override;
  void begin(const RunContext& context) override;
  void add_record(const Record& record) override;
  void finish(const RunSummary& summary) override;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

inline constexpr const char* kJsonSchema = "commbench.collectives/2";

}  // namespace commbench
