#include "commbench/analysis/replay_run_comparison.hpp"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

#include "commbench/core/error.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/core/size.hpp"
#include "commbench/core/text_table.hpp"

namespace commbench {

namespace {

RunStepFigures step_figures(const TraceSummary& summary, const char* which) {
  if (summary.steps.empty())
    throw UsageError(fmt::format(
        "--before: the {} run's traces hold no profiler step (ProfilerStep#N): runs are compared per step", which));
  RunStepFigures figures;
  figures.steps = static_cast<int>(summary.steps.size());
  const double steps = figures.steps;
  double bytes = 0;
  bool bytes_known = true;
  for (const StepSummary& step : summary.steps) {
    figures.step_seconds += step.step_seconds / steps;
    figures.calls += static_cast<double>(step.calls) / steps;
    bytes += static_cast<double>(step.bytes) / steps;
    bytes_known = bytes_known && step.bytes_known;
    if (step.communication_seconds)
      figures.communication_seconds = figures.communication_seconds.value_or(0) + *step.communication_seconds / steps;
    figures.wait_seconds += step.wait_seconds / steps;
  }
  if (bytes_known) figures.bytes = bytes;
  figures.exposed_seconds = per_step_over_ranks(summary, &RankTraceSummary::exposed_seconds);
  return figures;
}

bool same_class(const ClassChange& change, const TracedClass& c) {
  return std::tie(change.op, change.dtype, change.bytes, change.bytes_known, change.group_ranks) ==
         std::tie(c.op, c.dtype, c.bytes, c.bytes_known, c.group_ranks);
}

ClassChange& class_for(std::vector<ClassChange>& classes, const TracedClass& c) {
  const auto found =
      std::find_if(classes.begin(), classes.end(), [&](const ClassChange& change) { return same_class(change, c); });
  if (found != classes.end()) return *found;
  classes.push_back({c.op, c.dtype, c.bytes, c.bytes_known, c.group_ranks, {}, {}, {}, {}});
  return classes.back();
}

std::string ms(const std::optional<double>& seconds) {
  return seconds ? significant_text(*seconds * 1e3, 4) : std::string("-");
}

std::string number(const std::optional<double>& value) { return value ? significant_text(*value, 4) : "-"; }

// The later value against the earlier: "-12.5 %", "+3 %"; "-" when either is missing or
// the earlier is nothing.
std::string change_text(const std::optional<double>& before, const std::optional<double>& after) {
  if (!before || !after || *before <= 0) return "-";
  const double change = 100 * (*after / *before - 1);
  return fmt::format("{}{} %", change >= 0 ? "+" : "", significant_text(change, 3));
}

std::string bytes_text(const std::optional<double>& bytes) {
  return bytes ? format_size(static_cast<std::uint64_t>(*bytes + 0.5)) : std::string("?");
}

nlohmann::ordered_json optional_json(const std::optional<double>& value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json();
}

nlohmann::ordered_json figures_json(const RunStepFigures& figures) {
  return {{"steps", figures.steps},
          {"step_seconds", figures.step_seconds},
          {"calls", figures.calls},
          {"bytes", optional_json(figures.bytes)},
          {"communication_seconds", optional_json(figures.communication_seconds)},
          {"exposed_seconds", optional_json(figures.exposed_seconds)},
          {"wait_seconds", figures.wait_seconds}};
}

}  // namespace

RunComparison compare_runs(const TraceSummary& before, const TraceSummary& after, const std::string& before_source) {
  RunComparison comparison;
  comparison.before_source = before_source;
  comparison.before = step_figures(before, "earlier");
  comparison.after = step_figures(after, "later");
  const double before_steps = comparison.before.steps, after_steps = comparison.after.steps;
  for (const TracedClass& c : after.classes) {
    ClassChange& change = class_for(comparison.classes, c);
    change.calls_after = static_cast<double>(c.calls) / after_steps;
    change.seconds_after = c.seconds;
  }
  for (const TracedClass& c : before.classes) {
    ClassChange& change = class_for(comparison.classes, c);
    change.calls_before = static_cast<double>(c.calls) / before_steps;
    change.seconds_before = c.seconds;
  }
  return comparison;
}

void print_run_comparison(const RunComparison& comparison) {
  const RunStepFigures& before = comparison.before;
  const RunStepFigures& after = comparison.after;
  fmt::print("# against the earlier run ({}, {}; this run {}), per step:\n", comparison.before_source,
             count_text(before.steps, "step"), count_text(after.steps, "step"));
  TextTable steps({{{"per step"}, Align::left, 12},
                   {{"before"}, Align::right, 10},
                   {{"after"}, Align::right, 10},
                   {{"change"}, Align::right, 9}},
                  "  ", "  ");
  const auto row = [&](const char* name, std::optional<double> b, std::optional<double> a, bool in_ms) {
    steps.add_row({name, in_ms ? ms(b) : number(b), in_ms ? ms(a) : number(a), change_text(b, a)});
  };
  row("step ms", before.step_seconds, after.step_seconds, true);
  row("calls", before.calls, after.calls, false);
  steps.add_row({"bytes", bytes_text(before.bytes), bytes_text(after.bytes), change_text(before.bytes, after.bytes)});
  row("comm ms", before.communication_seconds, after.communication_seconds, true);
  row("exposed ms", before.exposed_seconds, after.exposed_seconds, true);
  row("wait ms", before.wait_seconds, after.wait_seconds, true);
  fmt::print("{}", steps.render());
  TextTable classes({{{"op"}, Align::left, 14},
                     {{"dtype"}, Align::left, 9},
                     {{"size"}, Align::right, 10},
                     {{"group"}, Align::right, 6},
                     {{"calls before"}, Align::right, 13},
                     {{"after"}, Align::right, 8},
                     {{"time ms before"}, Align::right, 15},
                     {{"after"}, Align::right, 10}},
                    "  ", "  ");
  std::vector<std::uint64_t> sizes;
  for (const ClassChange& c : comparison.classes) sizes.push_back(c.bytes);
  const std::vector<std::string> size_texts = format_sizes_apart(sizes);
  for (std::size_t i = 0; i < comparison.classes.size(); ++i) {
    const ClassChange& c = comparison.classes[i];
    classes.add_row({c.op, c.dtype.empty() ? "?" : c.dtype, c.bytes_known ? size_texts[i] : "?",
                     c.group_ranks > 0 ? std::to_string(c.group_ranks) : "?", number(c.calls_before),
                     number(c.calls_after), ms(c.seconds_before), ms(c.seconds_after)});
  }
  fmt::print("{}", classes.render());
}

nlohmann::ordered_json run_comparison_json(const RunComparison& comparison) {
  nlohmann::ordered_json classes = nlohmann::ordered_json::array();
  for (const ClassChange& c : comparison.classes)
    classes.push_back({{"op", c.op},
                       {"dtype", c.dtype.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(c.dtype)},
                       {"bytes", c.bytes_known ? nlohmann::ordered_json(c.bytes) : nlohmann::ordered_json()},
                       {"group_ranks", c.group_ranks > 0 ? nlohmann::ordered_json(c.group_ranks) : nlohmann::ordered_json()},
                       {"calls_before", optional_json(c.calls_before)},
                       {"calls_after", optional_json(c.calls_after)},
                       {"seconds_before", optional_json(c.seconds_before)},
                       {"seconds_after", optional_json(c.seconds_after)}});
  return {{"source", comparison.before_source},
          {"before", figures_json(comparison.before)},
          {"after", figures_json(comparison.after)},
          {"classes", classes}};
}

}  // namespace commbench
