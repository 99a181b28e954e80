#include "commbench/report/reporter_set.hpp"

#include <filesystem>
#include <system_error>

#include <cstdio>

#include "commbench/report/console_reporter.hpp"
#include "commbench/report/csv_reporter.hpp"
#include "commbench/report/json_reporter.hpp"

namespace commbench {

void check_output_paths(const OutputRequest& request) {
  if (!request.csv_path.empty()) check_output_path(request.csv_path, "--csv", request.force, OutputKind::streamed);
  if (!request.json_path.empty()) check_output_path(request.json_path, "--json", request.force, OutputKind::replaced);
}

ReporterSet ReporterSet::open(const OutputRequest& request) {
  ReporterSet set;
  switch (request.stdout_format) {
    case OutputFormat::table: set.reporters_.push_back(std::make_unique<ConsoleReporter>(stdout)); break;
    case OutputFormat::csv: set.reporters_.push_back(std::make_unique<CsvReporter>(stdout)); break;
    case OutputFormat::json: set.reporters_.push_back(std::make_unique<JsonReporter>("", stdout)); break;
    case OutputFormat::none: break;
  }
  set.stdout_reporters_ = set.reporters_.size();
  if (!request.json_path.empty()) {
    check_output_path(request.json_path, "--json", request.force, OutputKind::replaced);
    create_parent_directories(request.json_path, "--json");
  }
  if (!request.csv_path.empty()) {
    set.files_.push_back(open_output_file(request.csv_path, "--csv", request.force));
    set.csv_path_ = request.csv_path;
    set.reporters_.push_back(std::make_unique<CsvReporter>(set.files_.back().get(), "--csv " + request.csv_path));
  }
  if (!request.json_path.empty()) set.reporters_.push_back(std::make_unique<JsonReporter>(request.json_path, nullptr));
  return set;
}

void ReporterSet::begin(const RunContext& context) {
  for (auto& reporter : reporters_) reporter->begin(context);
}

void ReporterSet::add_row(const ResultRow& row) {
  for (auto& reporter : reporters_) reporter->add_row(row);
}

void ReporterSet::add_record(const Record& record) {
  for (auto& reporter : reporters_) reporter->add_record(record);
}

void ReporterSet::finish(const RunSummary& summary) {
  for (auto& reporter : reporters_) reporter->finish(summary);
}

void ReporterSet::discard() {
  reporters_.clear();
  files_.clear();
  std::error_code error;
  // A streamed CSV may be a FIFO or /dev/stdout: only a file of its own is removed.
  if (!csv_path_.empty() && std::filesystem::is_regular_file(csv_path_, error)) std::filesystem::remove(csv_path_, error);
  csv_path_.clear();
}

void ReporterSet::finish_files(const RunSummary& summary) {
  for (std::size_t i = stdout_reporters_; i < reporters_.size(); ++i) reporters_[i]->finish(summary);
}

}  // namespace commbench
