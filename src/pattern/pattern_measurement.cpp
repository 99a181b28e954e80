#include "commbench/pattern/pattern_measurement.hpp"

#include <span>
#include <sstream>

#include "commbench/core/error.hpp"
#include "commbench/core/interrupted.hpp"
#include "commbench/core/stopping_rule.hpp"

namespace commbench {

PatternMeasurement measure_pattern(PatternStepWorkload& workload, Bootstrap& world, std::uint64_t steps,
                                   std::uint64_t warmup, Watchdog* watchdog) {
  const FixedCountCriterion criterion(steps);
  MeasurementSettings settings;
  settings.warmup_iterations = warmup;
  MeasurementLoop loop(world, criterion, settings, watchdog);
  PatternMeasurement result;
  try {
    result.loop = loop.measure(workload);
  } catch (const Interrupted& stop) {
    // Every rank agreed on it after the same timed batch: all of them keep those steps.
    if (loop.timed_iterations() == 0) throw;
    result.interrupted_by = stop.signal_number();
    result.loop.iterations = loop.timed_iterations();
  }
  // The loop's warm-up and calibration steps come first; the timed ones are the last.
  const std::vector<StepBreakdown>& all = workload.steps();
  const std::size_t timed = std::min<std::size_t>(all.size(), result.loop.iterations);
  std::optional<Watchdog::Guard> guard;
  if (watchdog != nullptr) guard.emplace(watchdog->guard(workload.describe() + " (agreeing on the breakdown)"));
  result.steps = slowest_rank_steps(world, std::span(all).subspan(all.size() - timed), result.breakdown_rank);
  result.step = mean_of(result.steps);
  if (result.interrupted_by != 0) {
    result.loop.slowest_seconds = result.step.step_seconds;
    result.loop.slowest_rank = result.breakdown_rank;
  }
  return result;
}

std::vector<StepBreakdown> slowest_rank_steps(Bootstrap& world, std::span<const StepBreakdown> mine,
                                              int& slowest_rank) {
  slowest_rank = world.max_with_rank(mean_of(mine).step_seconds).rank;
  std::string text;
  if (world.rank() == slowest_rank)
    for (const StepBreakdown& step : mine) text += breakdown_to_text(step) + "\n";
  text = world.broadcast(text, slowest_rank);
  std::vector<StepBreakdown> steps;
  for (std::size_t begin = 0, end = 0; (end = text.find('\n', begin)) != std::string::npos; begin = end + 1)
    steps.push_back(breakdown_from_text(text.substr(begin, end - begin)));
  return steps;
}

std::string breakdown_to_text(const StepBreakdown& step) {
  std::ostringstream out;
  out.precision(17);
  out << step.step_seconds << ' ' << step.compute_seconds << ' ' << step.communication_seconds << ' '
      << step.communication_busy_seconds << ' ' << step.exposed_seconds << ' ' << step.unattributed_exposed_seconds
      << ' ' << step.types.size();
  for (const CommunicationTotals& totals : step.types)
    out << ' ' << static_cast<int>(totals.type.kind) << ' ' << static_cast<int>(totals.type.op) << ' '
        << static_cast<int>(totals.type.group) << ' ' << totals.count << ' ' << totals.bytes << ' ' << totals.seconds
        << ' ' << totals.exposed_seconds;
  return out.str();
}

StepBreakdown breakdown_from_text(const std::string& text) {
  std::istringstream in(text);
  StepBreakdown step;
  std::size_t types = 0;
  in >> step.step_seconds >> step.compute_seconds >> step.communication_seconds >> step.communication_busy_seconds >>
      step.exposed_seconds >> step.unattributed_exposed_seconds >> types;
  for (std::size_t i = 0; in && i < types; ++i) {
    CommunicationTotals totals;
    int kind = 0, op = 0, group = 0;
    in >> kind >> op >> group >> totals.count >> totals.bytes >> totals.seconds >> totals.exposed_seconds;
    totals.type = {static_cast<StepKind>(kind), static_cast<Collective>(op), static_cast<GroupRole>(group)};
    step.types.push_back(totals);
  }
  if (!in) throw UsageError("pattern: a step breakdown could not be read back: \"" + text.substr(0, 60) + "\"");
  return step;
}

}  // namespace commbench
