#include "commbench/analysis/pattern_results.hpp"

#include <cstdio>
#include <functional>

#include <fmt/format.h>

#include "commbench/analysis/optional_json.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/core/record.hpp"
#include "commbench/core/size.hpp"
#include "commbench/core/text_table.hpp"
#include "commbench/report/scheduler_job.hpp"

namespace commbench {

namespace {

std::string ms(double seconds) { return milliseconds_text(seconds * 1e3, 4); }
std::string optional_gbps(const std::optional<double>& gbps) { return gbps ? significant_text(*gbps, 4) : "?"; }

}  // namespace

std::optional<PipelineBubble> bubble_of(const PatternConfig& config, const StepBreakdown& step) {
  return pipeline_bubble(config.layout.pipeline, config.micro_batches(), config.pipeline.virtual_stages, step);
}

void print_pattern_header(const PatternConfig& config, int ranks, std::uint64_t steps, std::uint64_t warmup) {
  const ParallelLayout& layout = config.layout;
  const std::string warmup_text = warmup == 0 ? "no warm-up" : count_text(warmup, "warm-up step");
  fmt::print("# bench-patterns: {}, tp {} x pp {} x dp {} (ep {}), {}, {}; {} ({}) on {}\n", pattern_name(config),
             layout.tensor, layout.pipeline, layout.data, layout.expert, count_text(steps, "step"), warmup_text,
             config.model.name, count_text(config.model.layers, "layer"), count_text(ranks, "rank"));
  std::fflush(stdout);
}

// `predicted_by`: the cost model's basis when the step was predicted, not measured.
void print_report(const PatternConfig& config, const PatternMeasurement& measured, const PatternReport& report,
                  const std::vector<std::string>& notes, const std::string& predicted_by) {
  const ParallelLayout& layout = config.layout;
  if (predicted_by.empty())
    fmt::print("# {} measured, breakdown of rank {} (slowest)\n", count_text(measured.loop.iterations, "step"),
               measured.breakdown_rank);
  else
    fmt::print(
        "# bench-patterns: PREDICTED (nothing run) {}, tp {} x pp {} x dp {} (ep {}), breakdown of rank {} "
        "(slowest); cost model: {}\n",
        pattern_name(config), layout.tensor, layout.pipeline, layout.data, layout.expert, measured.breakdown_rank,
        predicted_by);
  TextTable steps({{{"step"}, Align::right, 5},
                   {{"time ms"}, Align::right, 10},
                   {{"compute ms"}, Align::right, 11},
                   {{"comm ms"}, Align::right, 10},
                   {{"exposed ms"}, Align::right, 11}},
                  "  ", "  ");
  for (std::size_t i = 0; i < measured.steps.size(); ++i) {
    const StepBreakdown& step = measured.steps[i];
    steps.add_row({std::to_string(i), ms(step.step_seconds), ms(step.compute_seconds), ms(step.communication_seconds),
                   ms(step.exposed_seconds)});
  }
  fmt::print("{}", steps.render());
  const StepBreakdown& mean = report.step;
  fmt::print(
      "{}step {} ms (wall, slowest rank {} ms); compute {} ms; communication {} ms (busy {} ms); exposed {} ms\n",
      predicted_by.empty() ? "" : "predicted ", ms(mean.step_seconds), ms(measured.loop.slowest_seconds),
      ms(mean.compute_seconds), ms(mean.communication_seconds), ms(mean.communication_busy_seconds),
      ms(mean.exposed_seconds));
  TextTable types({{{"type"}, Align::left, 24},
                   {{"count"}, Align::right, 6},
                   {{"bytes"}, Align::right, 10},
                   {{"time ms"}, Align::right, 10},
                   {{"exposed ms"}, Align::right, 11},
                   {{"busbw GB/s"}, Align::right, 11},
                   {{"theory"}, Align::right, 8},
                   {{"median"}, Align::right, 9},
                   {{"bound"}, Align::left, 0, 2}},
                  "  ", "  ");
  for (const CommunicationTypeReport& type : report.types)
    types.add_row({fmt::format("{} ({})", label_of(type.totals.type), type.group.ranks),
                   std::to_string(type.totals.count), format_size(type.totals.bytes), ms(type.totals.seconds),
                   ms(type.totals.exposed_seconds), significant_text(type.busbw_gbps, 4),
                   optional_gbps(type.group.spec_gbps), format_size(type.median_bytes),
                   type.latency_bound ? "latency" : "bandwidth"});
  fmt::print("{}", types.render());
  if (const auto bubble = bubble_of(config, report.step))
    fmt::print("pipeline bubble: {}% of the step {} (not compute), ideal {}% ((P-1)/(v x M+P-1))\n",
               significant_text(100 * bubble->measured, 3), predicted_by.empty() ? "measured" : "predicted",
               significant_text(100 * bubble->ideal, 3));
  fmt::print("NIC: {}\n", report.nic.text);
  fmt::print("verdict: {} — {}\n", name_of(report.bound), report.top_cause);
  for (const std::string& note : notes) fmt::print("# note: {}\n", note);
  std::fflush(stdout);
}

nlohmann::ordered_json step_json(const StepBreakdown& step) {
  return {{"step_seconds", step.step_seconds},
          {"compute_seconds", step.compute_seconds},
          {"communication_seconds", step.communication_seconds},
          {"communication_busy_seconds", step.communication_busy_seconds},
          {"exposed_seconds", step.exposed_seconds},
          {"unattributed_exposed_seconds", step.unattributed_exposed_seconds}};
}

Record step_record(std::size_t index, const StepBreakdown& step) {
  return {&record_kind("step"),
          {whole_value(index), step.step_seconds, step.compute_seconds, step.communication_seconds,
           step.communication_busy_seconds, step.exposed_seconds, step.unattributed_exposed_seconds},
          {}};
}

Record type_record(const CommunicationTypeReport& type) {
  const CommunicationType& what = type.totals.type;
  return {&record_kind("type"),
          {label_of(what), std::string(what.kind == StepKind::peer ? "peer" : "collective"),
           std::string(name_of(what.op)), std::string(name_of(what.group)), std::int64_t{type.group.ranks},
           std::int64_t{type.group.nodes}, whole_value(type.totals.count), whole_value(type.totals.bytes),
           whole_value(type.median_bytes), type.totals.seconds, type.totals.exposed_seconds, type.algbw_gbps,
           type.busbw_gbps, optional_value(type.group.spec_gbps), optional_value(type.group.achievable_gbps),
           optional_value(type.efficiency), optional_value(type.half_peak_bytes),
           std::int64_t{type.latency_bound ? 1 : 0}, type.group.basis},
          {}};
}

void prepare_pattern_context(RunContext& context) {
  context.record_kind = "step";
  context.mixed_record_kinds = {"type", "step"};
  context.settings_in_csv = true;
}

void add_pattern_records(const std::function<void(const Record&)>& add, const PatternMeasurement& measured,
                         const PatternReport& report) {
  for (const CommunicationTypeReport& type : report.types) add(type_record(type));
  for (std::size_t i = 0; i < measured.steps.size(); ++i) add(step_record(i, measured.steps[i]));
}

void add_section(RunSummary& summary, const std::string& key, const nlohmann::ordered_json& value) {
  summary.sections.emplace_back(key, value);
}

nlohmann::ordered_json settings_json(const std::vector<std::pair<std::string, std::string>>& settings) {
  nlohmann::ordered_json pattern = nlohmann::ordered_json::object();
  for (const auto& [key, value] : settings) pattern[key] = value;
  return pattern;
}

nlohmann::ordered_json verdict_json(const PatternReport& report) {
  return {{"bound", name_of(report.bound)}, {"top_cause", report.top_cause}};
}

RunSummary measured_pattern_summary(const RunContext& context, const PatternMeasurement& measured,
                                    const PatternReport& report, const std::optional<PipelineBubble>& bubble,
                                    const ComputeCalibration& calibration, int exit_code) {
  RunSummary summary;
  summary.complete = measured.interrupted_by == 0;
  summary.rows = report.types.size() + measured.steps.size();
  summary.exit_code = exit_code;
  add_section(summary, "pattern", settings_json(context.settings));
  add_section(summary, "steps_measured", measured.loop.iterations);
  // An interrupted loop combined no wall times over ranks: its steps' breakdowns stand.
  add_section(summary, "wall_step_seconds",
              measured.interrupted_by != 0 ? nlohmann::ordered_json(nullptr)
                                           : nlohmann::ordered_json{{"slowest", measured.loop.slowest_seconds},
                                                                    {"fastest", measured.loop.fastest_seconds},
                                                                    {"mean", measured.loop.mean_seconds},
                                                                    {"slowest_rank", measured.loop.slowest_rank}});
  add_section(summary, "breakdown_rank", measured.breakdown_rank);
  add_section(summary, "mean_step", step_json(report.step));
  add_section(summary, "nic",
              {{"crosses_nodes", report.nic.crosses_nodes},
               {"bytes_per_node_per_step", report.nic.bytes_per_node},
               {"gbps_per_nic", report.nic.gbps_per_nic},
               {"nic_gbps", optional_json(report.nic.nic_gbps)},
               {"text", report.nic.text}});
  add_section(summary, "verdict", verdict_json(report));
  if (bubble) add_section(summary, "pipeline_bubble", {{"measured", bubble->measured}, {"ideal", bubble->ideal}});
  add_section(summary, "compute_calibration",
              {{"offset_seconds", calibration.offset_seconds},
               {"worst_absolute_error_seconds", calibration.worst_absolute_error_seconds()}});
  add_section(summary, "exit_code", exit_code);
  return summary;
}

}  // namespace commbench
