#include "commbench/pattern/pattern_measurement.hpp"

#include <nlohmann/json.hpp>
#include <span>

#include "commbench/backend/typed_exchange.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/interrupted.hpp"
#include "commbench/core/stopping_rule.hpp"

namespace commbench {

PatternMeasurement measure_pattern(PatternStepWorkload& workload, Bootstrap& world, std::uint64_t steps,
                                   std::uint64_t warmup, Watchdog* watchdog, PhaseListener* phases) {
  const FixedCountCriterion criterion(steps);
  MeasurementSettings settings;
  settings.warmup_iterations = warmup;
  settings.phases = phases;
  settings.planned_iterations = steps;
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

// A breakdown as it travels between ranks (backend/typed_exchange.hpp): found by ADL.
void to_json(nlohmann::json& json, const CommunicationTotals& totals) {
  json = {{"kind", static_cast<int>(totals.type.kind)}, {"op", static_cast<int>(totals.type.op)},
          {"group", static_cast<int>(totals.type.group)}, {"count", totals.count}, {"bytes", totals.bytes},
          {"seconds", totals.seconds}, {"exposed_seconds", totals.exposed_seconds}};
}

void from_json(const nlohmann::json& json, CommunicationTotals& totals) {
  totals.type = {static_cast<StepKind>(json.at("kind").get<int>()), static_cast<Collective>(json.at("op").get<int>()),
                 static_cast<GroupRole>(json.at("group").get<int>())};
  json.at("count").get_to(totals.count);
  json.at("bytes").get_to(totals.bytes);
  json.at("seconds").get_to(totals.seconds);
  json.at("exposed_seconds").get_to(totals.exposed_seconds);
}

void to_json(nlohmann::json& json, const StepBreakdown& step) {
  json = {{"step", step.step_seconds},
          {"compute", step.compute_seconds},
          {"communication", step.communication_seconds},
          {"busy", step.communication_busy_seconds},
          {"exposed", step.exposed_seconds},
          {"unattributed", step.unattributed_exposed_seconds},
          {"types", step.types}};
}

void from_json(const nlohmann::json& json, StepBreakdown& step) {
  json.at("step").get_to(step.step_seconds);
  json.at("compute").get_to(step.compute_seconds);
  json.at("communication").get_to(step.communication_seconds);
  json.at("busy").get_to(step.communication_busy_seconds);
  json.at("exposed").get_to(step.exposed_seconds);
  json.at("unattributed").get_to(step.unattributed_exposed_seconds);
  json.at("types").get_to(step.types);
}

std::vector<StepBreakdown> slowest_rank_steps(Bootstrap& world, std::span<const StepBreakdown> mine,
                                              int& slowest_rank) {
  slowest_rank = world.max_with_rank(mean_of(mine).step_seconds).rank;
  return broadcast_as(world, std::vector<StepBreakdown>(mine.begin(), mine.end()), slowest_rank);
}

}  // namespace commbench
