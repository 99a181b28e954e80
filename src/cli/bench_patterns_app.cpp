#include "commbench/cli/bench_patterns_app.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "command_line_parser.hpp"
#include "optional_json.hpp"
#include "pattern_results.hpp"
#include "commbench/cli/bandwidth_cost_model.hpp"
#include "commbench/cli/flag_values.hpp"
#include "commbench/cli/job_command.hpp"
#include "commbench/cli/job_session.hpp"
#include "commbench/cli/live_probe.hpp"
#include "commbench/cli/pattern_bandwidth.hpp"
#include "commbench/cli/sweep_cost_model.hpp"
#include "commbench/core/build_info.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/input_file.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/core/size.hpp"
#include "commbench/core/profile_range.hpp"
#include "commbench/pattern/pattern_executor.hpp"
#include "commbench/pattern/pattern_measurement.hpp"
#include "commbench/pattern/pattern_report.hpp"
#include "commbench/pattern/schedule_json.hpp"
#include "commbench/pattern/step_prediction.hpp"
#include "commbench/pattern/step_trace.hpp"
#include "commbench/pattern/tuning_space.hpp"
#include "commbench/report/output_file.hpp"
#include "commbench/report/scheduler_job.hpp"
#include "commbench/runner/interruption.hpp"
#include "pattern_flags.hpp"
#include "pattern_tuning.hpp"

namespace commbench {
namespace {

constexpr const char* kProgram = "bench-patterns";
constexpr const char* kPatternsSchema = "commbench.patterns/1";

struct PatternRunOptions {
  std::string backend = "auto";
  std::uint64_t steps = 10;
  std::uint64_t warmup = 2;
  double timeout_seconds = 300;
  std::string csv_path, json_path, dump_path, trace_path;
  bool dry_run = false;
  bool force = false;
  // --predict: the step computed from a cost model, nothing run
  bool predict = false;
  std::string from_path;
  int nodes = 1;
  std::optional<int> gpus_per_node;
  // --tune: search the framework's knobs by measuring (pattern_tuning.hpp)
  bool tune = false;
  TuneRequest tune_request;
  PatternFlags pattern;
};

struct ParsedPatternCommandLine {
  std::optional<PatternRunOptions> options;
  std::string text_to_print;
};

// --tune runs trials, not one measured step: what describes one step does not apply, and
// each trial is short unless -n/-w say otherwise.
void check_tuning_flags(const CLI::App& app, PatternRunOptions& options, bool measure_all) {
  const bool tuning_given = app.count("--tune-budget") > 0 || !options.tune_request.output_path.empty() || measure_all;
  if (!options.tune) {
    if (tuning_given)
      throw UsageError(std::string(app.count("--tune-budget") > 0 ? "--tune-budget"
                                   : measure_all                  ? "--tune-measure-all"
                                                                  : "--tune-output") +
                       ": applies to --tune only");
    return;
  }
  if (options.predict) throw UsageError("--tune: measures on the job's ranks; --predict runs nothing");
  if (options.dry_run) throw UsageError("--dry-run: --tune measures trials");
  if (!options.trace_path.empty()) throw UsageError("--trace: not with --tune (trace one run of the best settings)");
  if (!options.dump_path.empty()) throw UsageError("--dump-schedule: not with --tune");
  options.tune_request.prune = !measure_all;
  options.tune_request.steps = app.count("--iters") > 0 ? options.steps : 3;
  options.tune_request.warmup = app.count("--warmup") > 0 ? options.warmup : 1;
  options.tune_request.csv_path = options.csv_path;
  options.tune_request.json_path = options.json_path;
  check_distinct_paths(options.csv_path, "--csv", options.tune_request.output_path, "--tune-output");
  check_distinct_paths(options.json_path, "--json", options.tune_request.output_path, "--tune-output");
}

ParsedPatternCommandLine parse_pattern_command_line(int argc, char** argv) {
  CLI::App app{
      "bench-patterns: the collectives of one training step (DDP, FSDP, ZeRO, pipeline, tensor and expert parallel), "
      "run with compute standing in for the model; reports what communication is exposed and why."};
  app.name(kProgram);
  PatternRunOptions options;
  add_backend_option(app, options.backend);
  add_parsed_option(
      app, "-n,--iters", options.steps, [](const std::string& text) { return parse_count(text, "-n/--iters", 1); },
      "Training steps measured", "N")
      ->default_str(std::to_string(options.steps));
  add_parsed_option(
      app, "-w,--warmup,--warmup-iters", options.warmup,
      [](const std::string& text) { return parse_count(text, "-w/--warmup", 0); },
      "Steps run before measuring", "N")
      ->default_str(std::to_string(options.warmup));
  add_timeout_option(app, options.timeout_seconds, "one step");
  add_parsed_option(
      app, "--csv", options.csv_path, [](const std::string& text) { return non_empty_file_name(text, "--csv"); },
      "Write a row per collective type and per step to this CSV file", "FILE");
  add_parsed_option(
      app, "--json", options.json_path, [](const std::string& text) { return non_empty_file_name(text, "--json"); },
      "Write provenance, the pattern and every figure to this JSON file", "FILE");
  add_parsed_option(
      app, "--dump-schedule", options.dump_path,
      [](const std::string& text) { return non_empty_file_name(text, "--dump-schedule"); },
      "Write every rank's schedule as JSON lines, one step a line", "FILE");
  add_parsed_option(
      app, "--trace", options.trace_path, [](const std::string& text) { return non_empty_file_name(text, "--trace"); },
      "Write the last measured step of every rank as a Chrome trace (opens in Perfetto): compute and each "
      "collective on its stream",
      "FILE");
  app.add_flag("--dry-run", options.dry_run,
               "Build and write the schedule (--dump-schedule), then exit without communicating");
  app.add_flag("--force", options.force, "Overwrite existing result files");
  app.add_flag("--predict", options.predict,
               "Compute the step's communication timeline from a cost model instead of running it (one process "
               "predicts any node count: --nodes x --gpus-per-node ranks)");
  add_parsed_option(
      app, "--from", options.from_path, [](const std::string& text) { return non_empty_file_name(text, "--from"); },
      "With --predict: cost each collective from this bench-collectives --csv file (default: the bandwidth model of "
      "this node)",
      "FILE");
  add_parsed_option(
      app, "--nodes", options.nodes,
      [](const std::string& text) { return static_cast<int>(parse_count(text, "--nodes", 1)); },
      "With --predict: nodes of the predicted job", "N")
      ->default_str(std::to_string(options.nodes));
  add_parsed_option(
      app, "--gpus-per-node", options.gpus_per_node,
      [](const std::string& text) {
        return std::optional<int>(static_cast<int>(parse_count(text, "--gpus-per-node", 1)));
      },
      "With --predict: ranks per node of the predicted job", "G");
  const std::string tuning = "Tuning";
  app.add_flag("--tune", options.tune,
               "Search the framework's knobs (DDP bucket_cap_mb; FSDP unit and prefetch; ZeRO buckets, prefetch, "
               "persistence, live parameters, overlap_comm) by measuring short runs; print the trials and the best "
               "settings")
      ->group(tuning);
  add_parsed_option(
      app, "--tune-budget", options.tune_request.budget_seconds,
      [](const std::string& text) {
        const double seconds = parse_number(text, "--tune-budget", false);
        if (!(seconds > 0)) throw UsageError("--tune-budget: must be positive (got " + text + ")");
        return seconds;
      },
      "Wall-clock seconds the search may take; it starts no trial that would end past it", "SECONDS")
      ->default_str(significant_text(options.tune_request.budget_seconds))
      ->group(tuning);
  add_parsed_option(
      app, "--tune-output", options.tune_request.output_path,
      [](const std::string& text) { return non_empty_file_name(text, "--tune-output"); },
      "Write the best settings as the framework reads them: a ds_config.json fragment (ZeRO) or the "
      "constructor's keyword arguments (DDP, FSDP), JSON",
      "FILE")
      ->group(tuning);
  bool measure_all = false;
  app.add_flag("--tune-measure-all", measure_all,
               "Measure every candidate: no pruning by the cost model fitted to the first trial")
      ->group(tuning);
  add_pattern_flags(app, options.pattern);
  const CommandLineOutcome outcome = parse_command_line(app, argc, argv, kProgram);
  if (outcome.request != CommandLineRequest::run) return {std::nullopt, outcome.text};
  check_tuning_flags(app, options, measure_all);
  if (options.dry_run && options.dump_path.empty())
    throw UsageError("--dry-run: give --dump-schedule FILE to write the schedule to");
  if (options.dry_run && !options.trace_path.empty()) throw UsageError("--trace: a dry run measures no step to trace");
  check_distinct_outputs(options.csv_path, options.json_path);
  if (!options.predict) {
    if (!options.from_path.empty()) throw UsageError("--from: applies to --predict only");
    if (options.gpus_per_node) throw UsageError("--gpus-per-node: applies to --predict only (a run takes the job's)");
    if (options.nodes != 1) throw UsageError("--nodes: applies to --predict only (a run takes the job's)");
  } else {
    if (!options.gpus_per_node) throw UsageError("--predict: give --gpus-per-node G, the ranks on each node");
    if (options.dry_run) throw UsageError("--dry-run: --predict runs nothing already");
    if (!options.dump_path.empty()) throw UsageError("--dump-schedule: not with --predict (use --dry-run without it)");
  }
  return {options, ""};
}

constexpr int kOutputFlagCount = 5;

const std::pair<const std::string&, const char*> output_flags(const PatternRunOptions& options, int index) {
  switch (index) {
    case 0: return {options.csv_path, "--csv"};
    case 1: return {options.json_path, "--json"};
    case 2: return {options.trace_path, "--trace"};
    case 3: return {options.tune_request.output_path, "--tune-output"};
    default: return {options.dump_path, "--dump-schedule"};
  }
}

std::vector<std::pair<std::string, std::string>> describe(const PatternRunOptions& options,
                                                          const PatternConfig& config) {
  return {{"pattern", std::string(name_of(config.kind))},
          {"model", config.model.name},
          {"parameters", significant_text(config.model.parameters)},
          {"layers", std::to_string(config.model.layers)},
          {"tp", std::to_string(config.layout.tensor)},
          {"pp", std::to_string(config.layout.pipeline)},
          {"dp", std::to_string(config.layout.data)},
          {"ep", std::to_string(config.layout.expert)},
          {"steps", std::to_string(options.steps)},
          {"warmup", std::to_string(options.warmup)},
          {"backend", options.backend}};
}

// --trace: every rank's last measured step, gathered on the reporting rank.
void write_measured_trace(const std::string& path, const PatternConfig& config, const RankSchedule& schedule,
                          const std::vector<ItemTiming>& last_timings, JobSession& session) {
  Bootstrap& world = session.world();
  session.step("writing the trace", [&] {
    const std::string own = rank_trace_events(schedule, last_timings, world.rank(),
                                              "rank " + std::to_string(world.rank()) + " (host " + world.hostname() + ")");
    const std::vector<std::string> fragments = world.all_gather(own);
    if (session.reporting())
      write_file_atomically(path, chrome_trace(fragments, std::string(name_of(config.kind)) + " step, last measured"),
                            "--trace");
  });
}

int run_in_job(const PatternRunOptions& options, JobStart& start) {
  set_profile_category(ProfileCategory::patterns);
  JobSession session(start, kPatternsSchema);
  Bootstrap& world = session.world();
  PatternConfig config;
  std::vector<std::string> notes;
  session.step("resolving the pattern", [&] {
    config = resolve_pattern_config(options.pattern, world.size(), world.local_size(), notes);
    config.layout.validate(world.size());
  });
  RankSchedule schedule;
  session.step("building the schedule", [&] { schedule = build_schedule(config, world.rank()); });
  if (!options.dump_path.empty()) {
    session.step("writing the schedule", [&] {
      if (!session.reporting()) return;
      std::string lines;
      for (int rank = 0; rank < world.size(); ++rank) lines += schedule_json_lines(build_schedule(config, rank));
      write_file_atomically(options.dump_path, lines, "--dump-schedule");
    });
  }
  if (options.dry_run) return 0;

  // The backend by name alone: the NCCL-only settings are bench-collectives' flags.
  Backend& backend = session.create_backend(BackendRequest{options.backend});
  if (options.tune) {
    session.step("listing the knobs to tune", [&] { tuning_space(config); });
    RunContext context = session.run_context(describe(options, config));
    context.notes.insert(context.notes.end(), notes.begin(), notes.end());
    return run_pattern_tuning(session, backend, config, context, options.tune_request);
  }
  std::unique_ptr<PatternGroups> groups;
  session.step("splitting the pattern's groups",
               [&] { groups = std::make_unique<PatternGroups>(backend, config.layout, schedule); });
  PatternBandwidthModel model;
  session.step("modelling the groups' bandwidth", [&] { model = model_pattern_bandwidth(*groups); });
  RunContext context = session.run_context(describe(options, config));
  context.notes.insert(context.notes.end(), notes.begin(), notes.end());

  PatternMeasurement measured;
  ComputeCalibration calibration;
  std::vector<ItemTiming> last_timings;
  int exit_code = 0;
  try {
    PatternStepWorkload workload(*groups, schedule, std::string(name_of(config.kind)) + " step");
    // A signal during the timed steps keeps those measured (interrupted_by); one before
    // the first is Interrupted, with nothing to report.
    measured = measure_pattern(workload, world, options.steps, options.warmup, &session.watchdog());
    if (measured.interrupted_by != 0) {
      exit_code = 128 + measured.interrupted_by;
      context.notes.push_back(fmt::format("interrupted by {} after {} of {} timed steps",
                                          interruption_signal_name(measured.interrupted_by), measured.steps.size(),
                                          options.steps));
    }
    calibration = workload.calibration();
    last_timings = workload.last_timings();
    context.notes.insert(context.notes.end(), workload.notes().begin(), workload.notes().end());
    if (!workload.compute_occupies().empty())
      context.notes.push_back("compute stand-in: " + workload.compute_occupies());
  } catch (const Interrupted& e) {
    exit_code = static_cast<int>(e.exit_code());
  }
  {
    auto guard = session.watchdog().guard("releasing the pattern's groups");
    groups.reset();
  }
  if (exit_code != 0 && measured.interrupted_by == 0) return exit_code;
  if (!options.trace_path.empty()) write_measured_trace(options.trace_path, config, schedule, last_timings, session);
  const PatternReport report = build_pattern_report(measured.step, median_sizes(schedule), model.bandwidths, model.nic);
  if (session.reporting()) {
    std::printf("%s", slurm_comment_line(context).c_str());
    print_report(config, measured, report, context.notes);
    write_pattern_results({options.csv_path, options.json_path}, context, measured, report, bubble_of(config, report.step),
                          calibration, exit_code);
    if (measured.interrupted_by != 0) print_command_error(kProgram, Interrupted(measured.interrupted_by).what());
  }
  return exit_code;
}

// The cost model --predict asks: the sweep given with --from, or the bandwidth model of
// this node (every node of the predicted job assumed alike).
std::unique_ptr<CommunicationCostModel> prediction_costs(const PatternRunOptions& options) {
  if (!options.from_path.empty())
    return std::make_unique<SweepCostModel>(read_input_file(options.from_path, "--from"),
                                            "--from " + options.from_path);
  try {
    return std::make_unique<BandwidthCostModel>(probe_node(probe_options_for_this_build("", "", "")),
                                                *options.gpus_per_node);
  } catch (const UsageError&) {
    throw;
  } catch (const Error& e) {
    throw UsageError(std::string("--predict: probing this node for the bandwidth model failed (") + e.what() +
                     "); give --from a bench-collectives CSV");
  }
}

// The group a type runs over in the predicted layout, with the bandwidth model's figure
// when that is the cost model (a sweep has none: its figures are what was measured).
GroupBandwidth predicted_group(const ParallelLayout& layout, const CommunicationType& type, int world_rank,
                               const BandwidthCostModel* bandwidth, const std::string& basis) {
  GroupBandwidth group;
  const std::vector<int> members = layout.members(type.group, world_rank);
  std::set<int> nodes;
  for (const int member : members) nodes.insert(member / layout.ranks_per_node);
  group.ranks = static_cast<int>(members.size());
  group.nodes = static_cast<int>(nodes.size());
  group.basis = basis;
  if (bandwidth) {
    const TheoreticalBusbw figure = bandwidth->figure(type.op, group.ranks, group.nodes);
    group.spec_gbps = figure.spec_gbps;
    group.achievable_gbps = figure.achievable_gbps;
    group.basis = figure.basis;
  }
  return group;
}

// --predict: the step's timeline from the cost model, reported as a measured step is
// (same console table, CSV and JSON with "predicted": true, the trace). Nothing is run,
// so one process answers for any node count.
std::string predict_and_report(const PatternRunOptions& options) {
  const long long ranks = static_cast<long long>(options.nodes) * *options.gpus_per_node;
  if (ranks > (1 << 24))
    throw UsageError("--nodes: " + std::to_string(options.nodes) + " x --gpus-per-node " +
                     std::to_string(*options.gpus_per_node) + " ranks is more than 16777216");
  std::vector<std::string> notes;
  const PatternConfig config =
      resolve_pattern_config(options.pattern, static_cast<int>(ranks), *options.gpus_per_node, notes);
  config.layout.validate(static_cast<int>(ranks));
  const std::unique_ptr<CommunicationCostModel> costs = prediction_costs(options);
  const auto started = std::chrono::steady_clock::now();
  StepPrediction prediction = predict_step(config, *costs);
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  PatternMeasurement predicted;
  std::size_t slowest = 0;
  std::vector<StepBreakdown> breakdowns;
  for (std::size_t index = 0; index < prediction.ranks.size(); ++index) {
    breakdowns.push_back(account_step(prediction.ranks[index].schedule, prediction.ranks[index].timings));
    if (breakdowns[index].step_seconds > breakdowns[slowest].step_seconds) slowest = index;
  }
  const RankSchedule& schedule = prediction.ranks[slowest].schedule;
  predicted.step = breakdowns[slowest];
  predicted.steps = {predicted.step};
  predicted.breakdown_rank = schedule.world_rank;
  predicted.loop.iterations = 1;
  predicted.loop.slowest_seconds = predicted.loop.fastest_seconds = predicted.loop.mean_seconds =
      predicted.step.step_seconds;
  predicted.loop.slowest_rank = schedule.world_rank;
  for (const double figure : {predicted.step.step_seconds, predicted.step.exposed_seconds})
    if (!std::isfinite(figure)) throw UsageError("--predict: the cost model gave a step that is not finite");

  const auto* bandwidth = dynamic_cast<const BandwidthCostModel*>(costs.get());
  std::map<CommunicationType, GroupBandwidth> groups;
  for (const CommunicationTotals& type : predicted.step.types)
    groups[type.type] = predicted_group(config.layout, type.type, schedule.world_rank, bandwidth, costs->basis());
  NicModel nic;
  nic.basis = "not modelled by --predict";
  const PatternReport report = build_pattern_report(predicted.step, median_sizes(schedule), groups, nic);

  if (const auto* sweep = dynamic_cast<const SweepCostModel*>(costs.get()))
    for (const std::string& note : sweep->notes()) notes.push_back(note);
  notes.push_back(prediction.every_rank ? "every rank's schedule simulated"
                                        : "one rank per pipeline stage simulated for all " + std::to_string(ranks) +
                                              " ranks (its stage's ranks run the same schedule: docs/patterns.md)");
  if (bandwidth) notes.push_back(costs->basis());

  if (!is_reporting_process()) return "";
  std::vector<std::pair<std::string, std::string>> settings = describe(options, config);
  settings.erase(std::remove_if(settings.begin(), settings.end(),
                                [](const auto& entry) {
                                  return entry.first == "steps" || entry.first == "warmup" || entry.first == "backend";
                                }),
                 settings.end());
  settings.insert(settings.end(), {{"predicted", "true"},
                                   {"nodes", std::to_string(options.nodes)},
                                   {"gpus_per_node", std::to_string(*options.gpus_per_node)},
                                   {"cost_model", costs->basis()}});
  print_report(config, predicted, report, notes, costs->basis());
  if (!options.csv_path.empty())
    write_file_atomically(options.csv_path, results_csv(settings, predicted, report), "--csv");
  if (!options.json_path.empty()) {
    nlohmann::ordered_json doc;
    doc["schema"] = kPatternsSchema;
    doc["predicted"] = true;
    doc["cost_model"] = {{"basis", costs->basis()}, {"from", options.from_path.empty() ? "bandwidth model" : "sweep"}};
    nlohmann::ordered_json pattern = nlohmann::ordered_json::object();
    for (const auto& [key, value] : settings) pattern[key] = value;
    doc["pattern"] = pattern;
    doc["ranks"] = ranks;
    doc["simulated_ranks"] = prediction.ranks.size();
    doc["every_rank_simulated"] = prediction.every_rank;
    doc["prediction_seconds"] = elapsed;
    doc["breakdown_rank"] = predicted.breakdown_rank;
    doc["mean_step"] = step_json(report.step);
    doc["types"] = nlohmann::ordered_json::array();
    for (const CommunicationTypeReport& type : report.types) doc["types"].push_back(type_json(type));
    doc["verdict"] = {{"bound", name_of(report.bound)}, {"top_cause", report.top_cause}};
    if (const auto bubble = bubble_of(config, report.step))
      doc["pipeline_bubble"] = {{"predicted", bubble->measured}, {"ideal", bubble->ideal}};
    doc["notes"] = notes;
    write_file_atomically(options.json_path,
                          doc.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n", "--json");
  }
  if (!options.trace_path.empty()) {
    std::vector<std::string> fragments;
    for (const PredictedRank& rank : prediction.ranks)
      fragments.push_back(rank_trace_events(rank.schedule, rank.timings, rank.schedule.world_rank,
                                            "rank " + std::to_string(rank.schedule.world_rank) + " (predicted)"));
    write_file_atomically(options.trace_path,
                          chrome_trace(fragments, std::string(name_of(config.kind)) + " step, predicted"), "--trace");
  }
  return "# predicted in " + significant_text(elapsed, 3) + " s, " + std::to_string(prediction.ranks.size()) +
         " schedules simulated";
}

}  // namespace

int run_bench_patterns(int argc, char** argv) {
  ParsedPatternCommandLine parsed;
  const auto prepare = [&]() -> std::optional<std::string> {
    parsed = parse_pattern_command_line(argc, argv);
    if (!parsed.options) return parsed.text_to_print;
    // Only the reporting process writes files, so only its file system is asked.
    // --predict runs nothing: the other processes of an mpirun have nothing to do.
    if (!is_reporting_process()) return parsed.options->predict ? std::optional<std::string>("") : std::nullopt;
    std::vector<std::pair<std::string, const char*>> outputs;
    for (int index = 0; index < kOutputFlagCount; ++index) outputs.emplace_back(output_flags(*parsed.options, index));
    prepare_replaced_outputs(outputs, parsed.options->force);
    if (parsed.options->predict) return predict_and_report(*parsed.options);
    return std::nullopt;
  };
  return run_command(
      kProgram, argc, argv, true, prepare, [&] { return parsed.options->timeout_seconds; },
      [&](JobStart& start) { return run_in_job(*parsed.options, start); });
}

}  // namespace commbench
