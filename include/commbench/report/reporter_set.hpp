// Every reporter of a run behind one object: the console table (or CSV/JSON) on stdout,
// the CSV file streamed row by row, the JSON file written atomically at the end. Commands
// ask for outputs with an OutputRequest; the job session opens and drives the set on the
// reporting rank.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "commbench/report/output_file.hpp"
#include "commbench/report/reporter.hpp"

namespace commbench {

// What goes to stdout: the collectives table, CSV, JSON, or nothing (a command that
// prints its own report, such as bench-p2p's matrices).
enum class OutputFormat { table, csv, json, none };

struct OutputRequest {
  OutputFormat stdout_format = OutputFormat::table;
  std::string csv_path;   // --csv, streamed; empty for none
  std::string json_path;  // --json, replaced atomically; empty for none
  bool force = false;     // --force: overwrite existing files
};

// What can be checked before the job starts (exists without --force, a directory, a
// device where a file would be renamed over it). UsageError naming the flag.
void check_output_paths(const OutputRequest& request);

class ReporterSet {
 public:
  ReporterSet() = default;
  // Opens every output the request names. JSON's checks come first: a refusal there must
  // not leave an empty CSV behind. UsageError/BackendError naming the flag.
  static ReporterSet open(const OutputRequest& request);

  void begin(const RunContext& context);
  void add_row(const ResultRow& row);
  void add_record(const Record& record);
  void finish(const RunSummary& summary);
  // The --csv and --json files only: what a timeout closes, since stdout may be a pipe
  // nobody reads any more.
  void finish_files(const RunSummary& summary);
  // Bad input found once the files were open (buffers that do not fit): the reporters are
  // dropped and the CSV, which holds a header and nothing measured, removed; the JSON is
  // written only at the end, so none exists. As a refusal before opening would leave none.
  void discard();

 private:
  std::string csv_path_;  // the CSV opened, to remove on discard
  std::vector<std::unique_ptr<Reporter>> reporters_;
  std::size_t stdout_reporters_ = 0;  // the first ones write to stdout
  std::vector<FileHandle> files_;
};

}  // namespace commbench
