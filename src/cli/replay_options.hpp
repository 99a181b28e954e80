// bench-replay's options: what it reads, what it holds the job against, and what a run of
// the traced step takes; declared on the command shell and checked before anything is read.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "commbench/cli/command_shell.hpp"
#include "commbench/replay/nsys_report_reader.hpp"
#include "pattern_flags.hpp"
#include "commbench/replay/trace_inputs.hpp"

namespace commbench {

struct ReplayOptions {
  std::vector<std::string> traces;                          // files or folders
  std::string fabric_path;                                  // --fabric: a bench-collectives CSV or JSON file
  int ranks = 0;                                            // --ranks: a DeepSpeed comms log's world size; 0 not given
  double export_limit_seconds = kDefaultNsysExportSeconds;  // --export-timeout
  std::string dump_path;      // --dump-schedule: the traced step in bench-patterns' format
  std::string topology_path;  // --topology: a node's bench-topology JSON, for its NICs
  std::string before_path;    // --before: an earlier run's traces, compared per step
  PatternRequest pattern;       // bench-patterns' model flags: the step to compare the job's with
  JobOptions job;             // --csv, --json, --force; with --replay also --backend and -T
  // --replay: the traced step run on this job's ranks; -n/-w its steps, --trace its timeline
  bool replay = false;
  MeasurementOptions measurement{10, 2};
  std::string trace_path;
  // --measure-fabric: each of the job's collectives measured on this job's ranks; -n fixes
  // the iterations (else bench-collectives' adaptive rule), -w the warm-up
  bool measure_fabric = false;
  bool iterations_given = false;
};

// What read_traces is asked for.
ReplayInputRequest input_request(const ReplayOptions& options);

// Whether the model flags describe a step to compare the job's with.
bool describes_a_model(const PatternRequest& flags);

// The model flag given first, to name in what the comparison with the model refuses.
std::string first_model_flag(const PatternRequest& flags);

void add_replay_options(CLI::App& app, ReplayOptions& options);

// What only a run of the traced step takes, and what it does not: one UsageError naming
// the flag.
void validate_replay_options(const CLI::App& app, ReplayOptions& options);

}  // namespace commbench
