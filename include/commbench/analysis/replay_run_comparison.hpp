// Two runs of one job side by side (bench-replay AFTER --before BEFORE): what new settings
// changed in the job's communication, per profiler step, and per class of call (operation,
// type, size, group). A trace diff of kernels and operators says what ran differently;
// this says what the communication cost before and after.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "commbench/replay/trace_summary.hpp"

namespace commbench {

// One run's figures per profiler step: the means over its steps (and its ranks).
struct RunStepFigures {
  int steps = 0;
  double step_seconds = 0;
  double calls = 0;
  std::optional<double> bytes;                  // none when a call has no size in the traces
  std::optional<double> communication_seconds;  // the ranks' backend time in the step
  std::optional<double> exposed_seconds;        // the ranks' mean, over the steps
  double wait_seconds = 0;
};

// A class of calls in either run: its calls per step and its time per call on each side;
// none on the side that has no such calls.
struct ClassChange {
  std::string op, dtype;
  std::uint64_t bytes = 0;
  bool bytes_known = true;
  int group_ranks = 0;
  std::optional<double> calls_before, calls_after;      // per step
  std::optional<double> seconds_before, seconds_after;  // per timed call
};

struct RunComparison {
  std::string before_source;
  RunStepFigures before, after;
  std::vector<ClassChange> classes;  // the later run's classes in its order, then those it no longer has
};

// UsageError when either run's traces hold no profiler step (nothing to take per step).
RunComparison compare_runs(const TraceSummary& before, const TraceSummary& after, const std::string& before_source);

void print_run_comparison(const RunComparison& comparison);
nlohmann::ordered_json run_comparison_json(const RunComparison& comparison);

}  // namespace commbench
