#include "pattern_options.hpp"

#include <fmt/format.h>

#include "command_line_parser.hpp"

#include "commbench/analysis/traced_job_step.hpp"
#include "commbench/cli/flag_values.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/core/size.hpp"

namespace commbench {
namespace {

// -n/-w, the shared job options and the files beside --csv/--json.
void add_run_options(CLI::App& app, PatternRunOptions& options) {
  add_measurement_options(app, options.measurement, "Training steps measured", "Steps run before measuring");
  add_job_options(app, options.job, "one step", "Write a row per collective type and per step to this CSV file",
                  "Write provenance, the pattern and every figure to this JSON file");
  add_parsed_option(
      app, "--dump-schedule", options.dump_path, non_empty_file_name,
      "Write every rank's schedule as JSON lines, one step a line", "FILE");
  add_parsed_option(
      app, "--trace", options.trace_path, non_empty_file_name,
      "Write the last measured step of every rank as a Chrome trace (opens in Perfetto): compute and each "
      "collective on its stream",
      "FILE");
  app.add_flag("--dry-run", options.dry_run,
               "Build and write the schedule (--dump-schedule), then exit without communicating");
}

// --predict and the job it predicts.
void add_prediction_options(CLI::App& app, PatternRunOptions& options) {
  app.add_flag("--predict", options.predict,
               "Compute the step's communication timeline from a cost model instead of running it (one process "
               "predicts any node count: --nodes x --gpus-per-node ranks)");
  add_parsed_option(
      app, "--from", options.from_path, non_empty_file_name,
      "With --predict: cost each collective from this bench-collectives --csv or --json file (default: the bandwidth "
      "model of this node)",
      "FILE");
  add_parsed_option(
      app, "--nodes", options.nodes,
      [](const std::string& text, const char* flag) { return static_cast<int>(parse_count(text, flag, 1)); },
      "With --predict: nodes of the predicted job", "N")
      ->default_str(std::to_string(options.nodes));
  add_parsed_option(
      app, "--gpus-per-node", options.gpus_per_node,
      [](const std::string& text, const char* flag) { return static_cast<int>(parse_count(text, flag, 1)); },
      "With --predict: ranks per node of the predicted job", "G");
}

void add_tuning_options(CLI::App& app, PatternRunOptions& options) {
  const std::string tuning = "Tuning";
  app.add_flag("--tune", options.tune,
               "Search the framework's knobs (DDP bucket_cap_mb; FSDP unit and prefetch; ZeRO buckets, prefetch, "
               "persistence, live parameters, overlap_comm) by measuring short runs; print the trials and the best "
               "settings")
      ->group(tuning);
  add_parsed_option(
      app, "--tune-budget", options.tune_request.budget_seconds,
      [](const std::string& text, const char* flag) {
        const double seconds = parse_number(text, flag, false);
        if (!(seconds > 0)) throw UsageError(fmt::format("{}: must be positive (got {})", flag, text));
        return seconds;
      },
      "Wall-clock seconds the search may take; it starts no trial that would end past it", "SECONDS")
      ->default_str(significant_text(options.tune_request.budget_seconds))
      ->group(tuning);
  add_parsed_option(
      app, "--tune-output", options.tune_request.output_path, non_empty_file_name,
      "Write the best settings as the framework reads them: a ds_config.json fragment (ZeRO) or the "
      "constructor's keyword arguments (DDP, FSDP), JSON",
      "FILE")
      ->group(tuning);
  add_parsed_option(
      app, "--memory-limit", options.tune_request.memory_limit_bytes,
      [](const std::string& text, const char* flag) { return parse_size(text, flag); },
      "Memory per rank a candidate may need (model states and the settings' buffers, activations not counted: "
      "leave room for them); candidates needing more are not run",
      "SIZE")
      ->group(tuning);
  app.add_flag("--tune-measure-all", options.tune_measure_all,
               "Measure every candidate: no pruning by the cost model fitted to the first trial")
      ->group(tuning);
  add_parsed_option(
      app, "--tune-against", options.tune_against, non_empty_file_name,
      "The job's own traces (a file or a folder, anything bench-replay reads): say the best's saving as a share "
      "of the job's traced step, and keep your settings when it saves under 2 % of it",
      "TRACE")
      ->group(tuning);
}

// --tune runs trials, not one measured step: what describes one step does not apply, and
// each trial is short unless -n/-w say otherwise.
void check_tuning_flags(const CLI::App& app, PatternRunOptions& options) {
  const bool measure_all = options.tune_measure_all;
  const bool limited = options.tune_request.memory_limit_bytes.has_value();
  const bool tuning_given = app.count("--tune-budget") > 0 || !options.tune_request.output_path.empty() ||
                            measure_all || !options.tune_against.empty() || limited;
  if (!options.tune) {
    if (tuning_given)
      throw UsageError(std::string(app.count("--tune-budget") > 0 ? "--tune-budget"
                                   : measure_all                  ? "--tune-measure-all"
                                   : !options.tune_against.empty() ? "--tune-against"
                                   : limited                       ? "--memory-limit"
                                                                  : "--tune-output") +
                       ": applies to --tune only");
    return;
  }
  if (options.predict) throw UsageError("--tune: measures on the job's ranks; --predict runs nothing");
  if (options.dry_run) throw UsageError("--dry-run: --tune measures trials");
  if (!options.trace_path.empty()) throw UsageError("--trace: not with --tune (trace one run of the best settings)");
  if (!options.dump_path.empty()) throw UsageError("--dump-schedule: not with --tune");
  if (!options.pattern.schedule.empty())
    throw UsageError("--schedule: not with --tune (a file's step has no framework settings to tune)");
  options.tune_request.prune = !measure_all;
  options.tune_request.steps = app.count("--iters") > 0 ? options.measurement.iterations : 3;
  options.tune_request.warmup = app.count("--warmup") > 0 ? options.measurement.warmup : 1;
  options.tune_request.files = file_outputs(options.job.files);
  if (!options.tune_against.empty()) options.tune_request.job = traced_job_step(options.tune_against, "--tune-against");
  check_distinct_paths(options.job.files.csv_path, "--csv", options.tune_request.output_path, "--tune-output");
  check_distinct_paths(options.job.files.json_path, "--json", options.tune_request.output_path, "--tune-output");
}

// --dry-run and --predict against the flags of a measured run.
void check_run_or_prediction(const PatternRunOptions& options) {
  if (options.dry_run && options.dump_path.empty())
    throw UsageError("--dry-run: give --dump-schedule FILE to write the schedule to");
  if (options.dry_run && !options.trace_path.empty()) throw UsageError("--trace: a dry run measures no step to trace");
  if (!options.predict) {
    if (!options.from_path.empty()) throw UsageError("--from: applies to --predict only");
    if (options.gpus_per_node) throw UsageError("--gpus-per-node: applies to --predict only (a run takes the job's)");
    if (options.nodes != 1) throw UsageError("--nodes: applies to --predict only (a run takes the job's)");
  } else {
    if (!options.gpus_per_node) throw UsageError("--predict: give --gpus-per-node G, the ranks on each node");
    if (options.dry_run) throw UsageError("--dry-run: --predict runs nothing already");
  }
}

}  // namespace

void add_pattern_run_options(CLI::App& app, PatternRunOptions& options) {
  add_run_options(app, options);
  add_prediction_options(app, options);
  add_tuning_options(app, options);
  add_pattern_flags(app, options.pattern);
}

void validate_pattern_run_options(const CLI::App& app, PatternRunOptions& options) {
  check_tuning_flags(app, options);
  check_run_or_prediction(options);
}

std::vector<std::pair<std::string, const char*>> pattern_replaced_files(const PatternRunOptions& options) {
  return {{options.job.files.csv_path, "--csv"},
          {options.job.files.json_path, "--json"},
          {options.trace_path, "--trace"},
          {options.tune_request.output_path, "--tune-output"},
          {options.dump_path, "--dump-schedule"}};
}

}  // namespace commbench
