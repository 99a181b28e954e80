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
#include "commbench/analysis/bandwidth_cost_model.hpp"
#include "commbench/cli/command_shell.hpp"
#include "commbench/cli/flag_values.hpp"
#include "commbench/cli/job_command.hpp"
#include "commbench/cli/job_session.hpp"
#include "commbench/analysis/live_probe.hpp"
#include "commbench/analysis/pattern_bandwidth.hpp"
#include "commbench/analysis/sweep_cost_model.hpp"
#include "commbench/core/build_info.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/input_file.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/core/profile_range.hpp"
#include "commbench/core/size.hpp"
#include "commbench/pattern/pattern_executor.hpp"
#include "commbench/pattern/pattern_measurement.hpp"
#include "commbench/pattern/pattern_report.hpp"
#include "commbench/pattern/schedule_json.hpp"
#include "commbench/pattern/step_prediction.hpp"
#include "commbench/pattern/step_trace.hpp"
#include "commbench/pattern/tuning_space.hpp"
#include "commbench/report/output_file.hpp"
#include "commbench/report/provenance.hpp"
#include "commbench/report/reporter_set.hpp"
#include "commbench/report/scheduler_job.hpp"
#include "commbench/runner/interruption.hpp"
#include "commbench/analysis/optional_json.hpp"
#include "pattern_flags.hpp"
#include "pattern_options.hpp"
#include "commbench/analysis/pattern_results.hpp"
#include "pattern_run.hpp"
#include "commbench/analysis/pattern_tuning.hpp"

namespace commbench {
namespace {

constexpr const char* kProgram = "bench-patterns";

int run_pattern(const PatternRunOptions& options, JobSession& session) {
  Bootstrap& world = session.world();
  PatternConfig config;
  std::vector<std::string> notes;
  session.step("resolving the pattern", [&] {
    config = resolve_pattern_config(options.pattern, world.size(), world.local_size(), notes);
    config.layout.validate(world.size());
  });
  return run_resolved_pattern(kProgram, options, session, config, notes);
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
// The slowest simulated rank's step as a run of one step, so the report and the files
// read as a measured run's do.
PatternMeasurement predicted_measurement(const StepPrediction& prediction, const SlowestPredictedRank& slowest) {
  const int world_rank = prediction.ranks[slowest.index].schedule.world_rank;
  PatternMeasurement predicted;
  predicted.step = slowest.step;
  predicted.steps = {predicted.step};
  predicted.breakdown_rank = world_rank;
  predicted.loop.iterations = 1;
  predicted.loop.slowest_seconds = predicted.loop.fastest_seconds = predicted.loop.mean_seconds =
      predicted.step.step_seconds;
  predicted.loop.slowest_rank = world_rank;
  for (const double figure : {predicted.step.step_seconds, predicted.step.exposed_seconds})
    if (!std::isfinite(figure)) throw UsageError("--predict: the cost model gave a step that is not finite");
  return predicted;
}

// What the prediction's JSON says beside the figures every run's JSON has.
struct PredictionFacts {
  const CommunicationCostModel& costs;
  long long ranks;
  const StepPrediction& prediction;
  double seconds;
};

// The prediction's files, through the reporters a measured run uses: its one step and
// types as records, and what the prediction says beside them as the document's own keys.
void write_prediction_files(const PatternRunOptions& options, const PatternConfig& config, const PredictionFacts& facts,
                            RunContext context, const PatternMeasurement& predicted, const PatternReport& report) {
  if (options.job.files.csv_path.empty() && options.job.files.json_path.empty()) return;
  prepare_pattern_context(context);
  ReporterSet files = ReporterSet::open(file_outputs(options.job.files));
  files.begin(context);
  add_pattern_records([&](const Record& record) { files.add_record(record); }, predicted, report);
  RunSummary summary;
  summary.rows = report.types.size() + predicted.steps.size();
  add_section(summary, "predicted", true);
  add_section(summary, "cost_model",
              {{"basis", facts.costs.basis()}, {"from", options.from_path.empty() ? "bandwidth model" : "sweep"}});
  add_section(summary, "pattern", settings_json(context.settings));
  add_section(summary, "ranks", facts.ranks);
  add_section(summary, "simulated_ranks", facts.prediction.ranks.size());
  add_section(summary, "every_rank_simulated", facts.prediction.every_rank);
  add_section(summary, "prediction_seconds", facts.seconds);
  add_section(summary, "breakdown_rank", predicted.breakdown_rank);
  add_section(summary, "mean_step", step_json(report.step));
  add_section(summary, "verdict", verdict_json(report));
  if (const auto bubble = bubble_of(config, report.step))
    add_section(summary, "pipeline_bubble", {{"predicted", bubble->measured}, {"ideal", bubble->ideal}});
  add_section(summary, "notes", context.notes);
  add_section(summary, "exit_code", 0);
  files.finish(summary);
}

void write_prediction_trace(const std::string& path, const PatternConfig& config, const StepPrediction& prediction) {
  std::vector<std::string> fragments;
  for (const PredictedRank& rank : prediction.ranks)
    fragments.push_back(rank_trace_events(rank.schedule, rank.timings, rank.schedule.world_rank,
                                          fmt::format("rank {} (predicted)", rank.schedule.world_rank)));
  write_file_atomically(path, chrome_trace(fragments, fmt::format("{} step, predicted", pattern_name(config))),
                        "--trace");
}

// The pattern's settings as a prediction states them: no steps, warm-up or backend; the
// predicted job and the cost model instead.
std::vector<std::pair<std::string, std::string>> prediction_settings(const PatternRunOptions& options,
                                                                     const PatternConfig& config,
                                                                     const CommunicationCostModel& costs) {
  std::vector<std::pair<std::string, std::string>> settings = describe(options, config);
  std::erase_if(settings, [](const auto& entry) {
    return entry.first == "steps" || entry.first == "warmup" || entry.first == "backend";
  });
  settings.insert(settings.end(), {{"predicted", "true"},
                                   {"nodes", std::to_string(options.nodes)},
                                   {"gpus_per_node", std::to_string(*options.gpus_per_node)},
                                   {"cost_model", costs.basis()}});
  return settings;
}

// --predict --dump-schedule: every rank's schedule of the layout predicted, as a dry run on
// that many ranks writes it (one node's worth of ranks per node, as --gpus-per-node says).
constexpr long long kMostDumpedRanks = 4096;

void write_predicted_schedules(const std::string& path, const PatternConfig& config, int ranks) {
  std::string lines;
  for (int rank = 0; rank < ranks; ++rank) lines += schedule_json_lines(build_schedule(config, rank), true);
  write_file_atomically(path, lines, "--dump-schedule");
}

std::string predict_and_report(const PatternRunOptions& options, const std::string& command_line) {
  const long long ranks = static_cast<long long>(options.nodes) * *options.gpus_per_node;
  if (ranks > (1 << 24))
    throw UsageError(fmt::format("--nodes: {} x --gpus-per-node {} ranks is more than 16777216", options.nodes,
                                 *options.gpus_per_node));
  if (!options.dump_path.empty() && ranks > kMostDumpedRanks)
    throw UsageError(
        fmt::format("--dump-schedule: {} ranks' schedules is more than the {} it writes", ranks, kMostDumpedRanks));
  std::vector<std::string> notes;
  const PatternConfig config =
      resolve_pattern_config(options.pattern, static_cast<int>(ranks), *options.gpus_per_node, notes);
  config.layout.validate(static_cast<int>(ranks));
  const std::unique_ptr<CommunicationCostModel> costs = prediction_costs(options);
  const auto started = std::chrono::steady_clock::now();
  StepPrediction prediction = predict_step(config, *costs);
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const SlowestPredictedRank slowest = slowest_predicted_rank(prediction);
  const PatternMeasurement predicted = predicted_measurement(prediction, slowest);
  const RankSchedule& schedule = prediction.ranks[slowest.index].schedule;

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
                                        : fmt::format("one rank per pipeline stage simulated for all {} ranks (its "
                                                      "stage's ranks run the same schedule: docs/patterns.md)",
                                                      ranks));
  if (bandwidth) notes.push_back(costs->basis());

  print_report(config, predicted, report, notes, costs->basis());
  RunContext context =
      context_without_job(kPatternsSchema, kProgram, command_line, prediction_settings(options, config, *costs));
  context.ranks = static_cast<int>(ranks);
  context.nodes = options.nodes;
  context.notes = notes;
  write_prediction_files(options, config, {*costs, ranks, prediction, elapsed}, std::move(context), predicted, report);
  if (!options.trace_path.empty()) write_prediction_trace(options.trace_path, config, prediction);
  if (!options.dump_path.empty()) write_predicted_schedules(options.dump_path, config, static_cast<int>(ranks));
  return fmt::format("# predicted in {} s, {} schedules simulated", significant_text(elapsed, 3),
                     prediction.ranks.size());
}

}  // namespace

int run_bench_patterns(int argc, char** argv) {
  const Command<PatternRunOptions> command{
      .name = kProgram,
      .description = "bench-patterns: the collectives of one training step (DDP, FSDP, ZeRO, pipeline, tensor and "
                     "expert parallel), run with compute standing in for the model; reports what communication is "
                     "exposed and why.",
      .schema = kPatternsSchema,
      .profile_category = ProfileCategory::patterns,
      .add_options = add_pattern_run_options,
      .validate = validate_pattern_run_options,
      .run = run_pattern,
      .replaced_files = pattern_replaced_files,
      // --predict runs nothing: one process computes the step; the other processes of an
      // mpirun have nothing to do.
      .without_job = [](const PatternRunOptions& options, bool reporting,
                        const std::string& command_line) -> std::optional<std::string> {
        if (!options.predict) return std::nullopt;
        return reporting ? predict_and_report(options, command_line) : std::string();
      },
      .read_files =
          [](const PatternRunOptions& options) {
            return NamedPaths{{options.from_path, "--from"},
                              {options.pattern.deepspeed_config, "--deepspeed-config"},
                              {options.pattern.schedule, "--schedule"}};
          },
  };
  return run_command(command, argc, argv);
}

}  // namespace commbench
