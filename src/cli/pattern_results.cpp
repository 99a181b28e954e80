#include "pattern_results.hpp"

#include <cstdio>

#include "optional_json.hpp"
#include "commbench/core/csv_field.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/core/size.hpp"
#include "commbench/core/text_table.hpp"
#include "commbench/report/output_file.hpp"
#include "commbench/report/provenance_json.hpp"
#include "commbench/report/scheduler_job.hpp"

namespace commbench {

namespace {

std::string ms(double seconds) { return significant_text(seconds * 1e3, 4); }
std::string optional_gbps(const std::optional<double>& gbps) { return gbps ? significant_text(*gbps, 4) : "?"; }

}  // namespace

std::optional<PipelineBubble> bubble_of(const PatternConfig& config, const StepBreakdown& step) {
  return pipeline_bubble(config.layout.pipeline, config.micro_batches(), config.pipeline.virtual_stages, step);
}

// `predicted_by`: the cost model's basis when the step was predicted, not measured.
void print_report(const PatternConfig& config, const PatternMeasurement& measured, const PatternReport& report,
                  const std::vector<std::string>& notes, const std::string& predicted_by) {
  if (predicted_by.empty())
    std::printf("# %s: %s, tp %d x pp %d x dp %d (ep %d), %s steps, breakdown of rank %d (slowest)\n", "bench-patterns",
                std::string(name_of(config.kind)).c_str(), config.layout.tensor, config.layout.pipeline,
                config.layout.data, config.layout.expert, std::to_string(measured.loop.iterations).c_str(),
                measured.breakdown_rank);
  else
    std::printf(
        "# %s: PREDICTED (nothing run) %s, tp %d x pp %d x dp %d (ep %d), breakdown of rank %d (slowest); "
        "cost model: %s\n",
        "bench-patterns", std::string(name_of(config.kind)).c_str(), config.layout.tensor, config.layout.pipeline,
        config.layout.data, config.layout.expert, measured.breakdown_rank, predicted_by.c_str());
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
  std::printf("%s", steps.render().c_str());
  const StepBreakdown& mean = report.step;
  std::printf(
      "%sstep %s ms (wall, slowest rank %s ms); compute %s ms; communication %s ms (busy %s ms); exposed %s ms\n",
      predicted_by.empty() ? "" : "predicted ", ms(mean.step_seconds).c_str(),
      ms(measured.loop.slowest_seconds).c_str(), ms(mean.compute_seconds).c_str(),
      ms(mean.communication_seconds).c_str(), ms(mean.communication_busy_seconds).c_str(),
      ms(mean.exposed_seconds).c_str());
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
    types.add_row({label_of(type.totals.type) + " (" + std::to_string(type.group.ranks) + ")",
                   std::to_string(type.totals.count), format_size(type.totals.bytes), ms(type.totals.seconds),
                   ms(type.totals.exposed_seconds), significant_text(type.busbw_gbps, 4),
                   optional_gbps(type.group.spec_gbps), format_size(type.median_bytes),
                   type.latency_bound ? "latency" : "bandwidth"});
  std::printf("%s", types.render().c_str());
  if (const auto bubble = bubble_of(config, report.step))
    std::printf("pipeline bubble: %s%% of the step %s (not compute), ideal %s%% ((P-1)/(v x M+P-1))\n",
                significant_text(100 * bubble->measured, 3).c_str(), predicted_by.empty() ? "measured" : "predicted",
                significant_text(100 * bubble->ideal, 3).c_str());
  std::printf("NIC: %s\n", report.nic.text.c_str());
  std::printf("verdict: %s — %s\n", std::string(name_of(report.bound)).c_str(), report.top_cause.c_str());
  for (const std::string& note : notes) std::printf("# note: %s\n", note.c_str());
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

nlohmann::ordered_json type_json(const CommunicationTypeReport& type) {
  return {{"type", label_of(type.totals.type)},
          {"kind", type.totals.type.kind == StepKind::peer ? "peer" : "collective"},
          {"op", name_of(type.totals.type.op)},
          {"group", name_of(type.totals.type.group)},
          {"group_ranks", type.group.ranks},
          {"group_nodes", type.group.nodes},
          {"count", type.totals.count},
          {"bytes", type.totals.bytes},
          {"median_bytes", type.median_bytes},
          {"seconds", type.totals.seconds},
          {"exposed_seconds", type.totals.exposed_seconds},
          {"algbw_gbps", type.algbw_gbps},
          {"busbw_gbps", type.busbw_gbps},
          {"theoretical_busbw_gbps", optional_json(type.group.spec_gbps)},
          {"achievable_busbw_gbps", optional_json(type.group.achievable_gbps)},
          {"efficiency", optional_json(type.efficiency)},
          {"half_peak_bytes", optional_json(type.half_peak_bytes)},
          {"latency_bound", type.latency_bound},
          {"basis", type.group.basis}};
}

// CSV: one row per collective type (record "type") and one per measured step (record
// "step"), each with the pattern's parameters in front.
std::string results_csv(const std::vector<std::pair<std::string, std::string>>& settings,
                        const PatternMeasurement& measured, const PatternReport& report) {
  std::string header;
  std::string prefix;
  for (const auto& [key, value] : settings) {
    header += key + ",";
    prefix += csv_escape(value) + ",";
  }
  header +=
      "record,step,type,op,group,group_ranks,count,bytes,seconds,exposed_seconds,busbw_gbps,theoretical_busbw_gbps,"
      "efficiency,latency_bound,step_seconds,compute_seconds,communication_seconds,step_exposed_seconds\n";
  std::string csv = header;
  const auto number = [](double value) { return significant_text(value, 9); };
  const auto optional_number = [&](const std::optional<double>& value) { return value ? number(*value) : ""; };
  for (const CommunicationTypeReport& type : report.types)
    csv += prefix + "type,," + label_of(type.totals.type) + "," + std::string(name_of(type.totals.type.op)) + "," +
           std::string(name_of(type.totals.type.group)) + "," + std::to_string(type.group.ranks) + "," +
           std::to_string(type.totals.count) + "," + std::to_string(type.totals.bytes) + "," +
           number(type.totals.seconds) + "," + number(type.totals.exposed_seconds) + "," + number(type.busbw_gbps) +
           "," + optional_number(type.group.spec_gbps) + "," + optional_number(type.efficiency) + "," +
           (type.latency_bound ? "true" : "false") + ",,,,\n";
  for (std::size_t i = 0; i < measured.steps.size(); ++i) {
    const StepBreakdown& step = measured.steps[i];
    csv += prefix + "step," + std::to_string(i) + ",,,,,,,,,,,,," + number(step.step_seconds) + "," +
           number(step.compute_seconds) + "," + number(step.communication_seconds) + "," +
           number(step.exposed_seconds) + "\n";
  }
  return csv;
}

void write_pattern_results(const PatternResultFiles& options, const RunContext& context, const PatternMeasurement& measured,
                   const PatternReport& report, const std::optional<PipelineBubble>& bubble,
                   const ComputeCalibration& calibration, int exit_code) {
  if (!options.csv_path.empty())
    write_file_atomically(options.csv_path, slurm_comment_line(context) + results_csv(context.settings, measured, report),
                          "--csv");
  if (options.json_path.empty()) return;
  nlohmann::ordered_json doc;
  doc["schema"] = context.schema;
  doc["provenance"] = provenance_json(context);
  nlohmann::ordered_json pattern = nlohmann::ordered_json::object();
  for (const auto& [key, value] : context.settings) pattern[key] = value;
  doc["pattern"] = pattern;
  doc["steps_measured"] = measured.loop.iterations;
  // An interrupted loop combined no wall times over ranks: its steps' breakdowns stand.
  if (measured.interrupted_by == 0)
    doc["wall_step_seconds"] = {{"slowest", measured.loop.slowest_seconds},
                                {"fastest", measured.loop.fastest_seconds},
                                {"mean", measured.loop.mean_seconds},
                                {"slowest_rank", measured.loop.slowest_rank}};
  else
    doc["wall_step_seconds"] = nullptr;
  doc["breakdown_rank"] = measured.breakdown_rank;
  doc["mean_step"] = step_json(report.step);
  doc["steps"] = nlohmann::ordered_json::array();
  for (const StepBreakdown& step : measured.steps) doc["steps"].push_back(step_json(step));
  doc["types"] = nlohmann::ordered_json::array();
  for (const CommunicationTypeReport& type : report.types) doc["types"].push_back(type_json(type));
  doc["nic"] = {{"crosses_nodes", report.nic.crosses_nodes},
                {"bytes_per_node_per_step", report.nic.bytes_per_node},
                {"gbps_per_nic", report.nic.gbps_per_nic},
                {"nic_gbps", optional_json(report.nic.nic_gbps)},
                {"text", report.nic.text}};
  doc["verdict"] = {{"bound", name_of(report.bound)}, {"top_cause", report.top_cause}};
  if (bubble) doc["pipeline_bubble"] = {{"measured", bubble->measured}, {"ideal", bubble->ideal}};
  doc["compute_calibration"] = {{"offset_seconds", calibration.offset_seconds},
                                {"worst_absolute_error_seconds", calibration.worst_absolute_error_seconds()}};
  doc["exit_code"] = exit_code;
  doc["complete"] = measured.interrupted_by == 0;
  write_file_atomically(options.json_path,
                        doc.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n", "--json");
}

}  // namespace commbench
