// A `.nsys-rep` turned into the SQLite database the reader reads, by the `nsys` on the
// PATH (`nsys export --type sqlite`), in a temporary folder removed with it.
#pragma once

#include <string>

namespace commbench {

class ExportedReport {
 public:
  ExportedReport(std::string folder, std::string sqlite_path)
      : folder_(std::move(folder)), sqlite_path_(std::move(sqlite_path)) {}
  ~ExportedReport();
  ExportedReport(const ExportedReport&) = delete;
  ExportedReport& operator=(const ExportedReport&) = delete;
  ExportedReport(ExportedReport&& other) noexcept;
  ExportedReport& operator=(ExportedReport&&) = delete;

  const std::string& sqlite_path() const { return sqlite_path_; }

 private:
  std::string folder_;
  std::string sqlite_path_;
};

// UsageError naming the report: no nsys on the PATH, or its export failed (its first line).
// An export still running after `limit_seconds` (0: no limit) is stopped: Error with exit 4.
ExportedReport export_nsys_report(const std::string& report_path, double limit_seconds);

}  // namespace commbench
