// DeepSpeed's communication log (the `comms_logger` section of ds_config): the table that
// `deepspeed.comm.log_summary()` prints on rank 0 (with `show_straggler=True`, a second
// table of the time rank 0 waited for the slowest rank), and the line per call that
// `"verbose": true` logs. It may be read from a whole training log: other lines are passed
// over. docs/replay.md says what the log holds and lacks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "commbench/replay/trace_summary.hpp"

namespace commbench {

// Calls of one operation and logged size: a row of the summary, or verbose lines added up.
struct DeepSpeedLogRow {
  std::string name;    // DeepSpeed's log name: "all_gather_into_tensor", "reduce_scatter_tensor", ...
  std::string caller;  // with comms_logger "debug": the calling function; else empty
  // The size DeepSpeed logs (the input tensor: one rank's share for all-gathers), as it
  // prints it: rounded to two decimals of B, KB, MB, GB (powers of 1024).
  std::uint64_t logged_bytes = 0;
  std::uint64_t count = 0;
  double total_ms = 0;                       // rank 0's calls, added up
  std::optional<double> fastest_total_ms;    // straggler table: the fastest rank's, call by call
  std::optional<double> straggler_total_ms;  // straggler table: rank 0's minus the fastest's
  std::optional<double> logged_busbw_gbit;   // DeepSpeed's own busbw figure (Gbit/s; not in verbose sums)
};

struct DeepSpeedCommsLog {
  std::string path;
  std::string source;                 // "log_summary()" or "verbose lines"
  std::vector<DeepSpeedLogRow> rows;  // in the order the log lists them
  std::size_t summaries = 0;          // summary tables in the file (the last is read)
  std::size_t verbose_calls = 0;      // verbose lines in the file
  bool has_straggler_table = false;
  std::vector<std::string> unjoined_straggler_rows;  // rows whose straggler figures count other calls
  // Verbose lines: every call in the order logged (count 1 each), and whether the times
  // logged were running totals per operation name, which `calls` and `rows` have undone.
  std::vector<DeepSpeedLogRow> calls;
  bool running_totals = false;
};

// UsageError naming the file: unreadable, neither a summary table nor a verbose line in
// it, a table row cut short or unreadable (its line and byte offset).
DeepSpeedCommsLog read_deepspeed_comms_log(const std::string& path);

// The log's calls as bench-replay's classes, over `ranks` ranks (the log does not say how
// many; DeepSpeed's own bandwidth figures assume the world size too). Sizes follow
// nccl-tests: an all-gather's logged share times the ranks. `notes` gets what was left out
// (DeepSpeed's own barrier in log_summary) and what the log lacks.
TraceSummary summarize_deepspeed_log(const DeepSpeedCommsLog& log, int ranks, std::vector<std::string>& notes);

}  // namespace commbench
