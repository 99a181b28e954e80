#include "commbench/analysis/replay_model_comparison.hpp"

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "commbench/core/size.hpp"
#include "commbench/core/text_table.hpp"

namespace commbench {

namespace {

std::vector<const ScheduleStep*> communication_of(const RankSchedule& schedule) {
  std::vector<const ScheduleStep*> steps;
  for (const ScheduleStep& step : schedule.steps)
    if (step.kind != StepKind::compute) steps.push_back(&step);
  return steps;
}

std::string operation_of(const ScheduleStep& step) {
  return std::string(step.kind == StepKind::peer ? name_of(Collective::sendrecv) : name_of(step.op));
}

// `exact`: the bytes in full, where the rounded sizes of two calls would read alike.
std::string call_text(const ScheduleStep& step, bool with_place, bool exact = false) {
  std::string text =
      fmt::format("{} of {}", operation_of(step), exact ? fmt::format("{} B", step.bytes) : format_size(step.bytes));
  if (with_place) text += fmt::format(" ({}, {})", step.label, name_of(step.phase));
  return text;
}

OperationCounts& counts_of(std::vector<OperationCounts>& operations, const std::string& op) {
  for (OperationCounts& counts : operations)
    if (counts.op == op) return counts;
  operations.push_back({op});
  return operations.back();
}

std::optional<std::string> first_difference(const std::vector<const ScheduleStep*>& job,
                                            const std::vector<const ScheduleStep*>& model, std::size_t same) {
  if (same < job.size() && same < model.size()) {
    const ScheduleStep& ran = *job[same];
    const ScheduleStep& modelled = *model[same];
    const bool exact = ran.bytes != modelled.bytes && format_size(ran.bytes) == format_size(modelled.bytes);
    return fmt::format("call {}: the job ran {}, the model {}", same + 1, call_text(ran, false, exact),
                       call_text(modelled, true, exact));
  }
  if (same < model.size())
    return fmt::format("after the job's {} calls the model goes on with {}", job.size(), call_text(*model[same], true));
  if (same < job.size())
    return fmt::format("after the model's {} calls the job goes on with {}", model.size(),
                       call_text(*job[same], false));
  return std::nullopt;
}

}  // namespace

ModelComparison compare_with_model(const RankSchedule& job, const RankSchedule& model, std::string model_name) {
  ModelComparison comparison;
  comparison.model = std::move(model_name);
  const std::vector<const ScheduleStep*> job_steps = communication_of(job);
  const std::vector<const ScheduleStep*> model_steps = communication_of(model);
  comparison.job_calls = job_steps.size();
  comparison.model_calls = model_steps.size();
  for (const ScheduleStep* step : job_steps) {
    OperationCounts& counts = counts_of(comparison.operations, operation_of(*step));
    ++counts.job_calls;
    counts.job_bytes += step->bytes;
  }
  for (const ScheduleStep* step : model_steps) {
    OperationCounts& counts = counts_of(comparison.operations, operation_of(*step));
    ++counts.model_calls;
    counts.model_bytes += step->bytes;
  }
  while (comparison.same_prefix < job_steps.size() && comparison.same_prefix < model_steps.size()) {
    const ScheduleStep& a = *job_steps[comparison.same_prefix];
    const ScheduleStep& b = *model_steps[comparison.same_prefix];
    if (operation_of(a) != operation_of(b) || a.bytes != b.bytes) break;
    ++comparison.same_prefix;
  }
  comparison.first_difference = first_difference(job_steps, model_steps, comparison.same_prefix);
  return comparison;
}

void print_model_comparison(const ModelComparison& comparison) {
  fmt::print("against the model ({}): the job's rank 0 ran {} calls, the model {}; {} alike from the first\n",
             comparison.model, comparison.job_calls, comparison.model_calls, comparison.same_prefix);
  TextTable table({{{"op"}, Align::left, 14},
                   {{"job calls"}, Align::right, 10},
                   {{"model calls"}, Align::right, 12},
                   {{"job bytes"}, Align::right, 11},
                   {{"model bytes"}, Align::right, 12}},
                  "  ", "  ");
  for (const OperationCounts& counts : comparison.operations)
    table.add_row({counts.op, std::to_string(counts.job_calls), std::to_string(counts.model_calls),
                   format_size(counts.job_bytes), format_size(counts.model_bytes)});
  fmt::print("{}", table.render());
  fmt::print("{}\n", comparison.first_difference
                         ? "first difference: " + *comparison.first_difference
                         : std::string("the job's calls and the model's are alike, call for call"));
}

nlohmann::ordered_json model_comparison_json(const ModelComparison& comparison) {
  nlohmann::ordered_json json;
  json["model"] = comparison.model;
  json["job_calls"] = comparison.job_calls;
  json["model_calls"] = comparison.model_calls;
  json["same_prefix"] = comparison.same_prefix;
  json["first_difference"] =
      comparison.first_difference ? nlohmann::ordered_json(*comparison.first_difference) : nlohmann::ordered_json();
  nlohmann::ordered_json operations = nlohmann::ordered_json::array();
  for (const OperationCounts& counts : comparison.operations)
    operations.push_back({{"op", counts.op},
                          {"job_calls", counts.job_calls},
                          {"model_calls", counts.model_calls},
                          {"job_bytes", counts.job_bytes},
                          {"model_bytes", counts.model_bytes}});
  json["operations"] = operations;
  return json;
}

}  // namespace commbench
