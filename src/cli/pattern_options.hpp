// The command line of bench-patterns around the step it describes (pattern_flags.hpp):
// what a run measures and writes, --predict (a cost model instead of a run) and --tune
// (short runs over the framework's knobs). Declared on the command shell's app
// (command_shell.hpp) with its shared groups.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "commbench/cli/command_shell.hpp"
#include "pattern_flags.hpp"
#include "commbench/analysis/pattern_tuning.hpp"

namespace commbench {

struct PatternRunOptions {
  JobOptions job;                            // --backend, -T (one step), --csv, --json, --force
  MeasurementOptions measurement{10, 2};     // -n: training steps measured, -w: steps before
  std::string dump_path, trace_path;         // --dump-schedule, --trace
  bool dry_run = false;
  // --predict: the step computed from a cost model, nothing run
  bool predict = false;
  std::string from_path;
  int nodes = 1;
  std::optional<int> gpus_per_node;
  // --tune: search the framework's knobs by measuring (pattern_tuning.hpp)
  bool tune = false;
  bool tune_measure_all = false;
  std::string tune_against;  // --tune-against: the job's traces
  TuneRequest tune_request;
  PatternRequest pattern;
};

void add_pattern_run_options(CLI::App& app, PatternRunOptions& options);
// What involves more than one flag; UsageError naming them. Also fills the tuning
// request from -n/-w and the result files.
void validate_pattern_run_options(const CLI::App& app, PatternRunOptions& options);
// Every file the run writes, each whole and renamed into place: --csv, --json, --trace,
// --tune-output, --dump-schedule (all checked before any folder is made).
std::vector<std::pair<std::string, const char*>> pattern_replaced_files(const PatternRunOptions& options);

}  // namespace commbench
