#include "commbench/pattern/step_accounting.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "commbench/core/error.hpp"

namespace commbench {

CommunicationType communication_type_of(const ScheduleStep& step) {
  if (step.kind == StepKind::peer) return {StepKind::peer, Collective::sendrecv, step.group};
  return {StepKind::collective, step.op, step.group};
}

std::string label_of(const CommunicationType& type) {
  return std::string(name_of(type.op)) + "/" + std::string(name_of(type.group));
}

namespace {

// One end of an interval in the sweep: `who` is -1 for compute, else a type's index.
struct Boundary {
  double at = 0;
  int change = 0;  // +1 opens, -1 closes
  int who = 0;
};

}  // namespace

StepBreakdown account_step(const RankSchedule& schedule, std::span<const ItemTiming> timings) {
  if (timings.size() != schedule.steps.size())
    throw UsageError(fmt::format("step accounting: {} timings for {} steps", timings.size(), schedule.steps.size()));
  StepBreakdown breakdown;
  std::map<CommunicationType, std::size_t> index_of;
  for (const ScheduleStep& step : schedule.steps)
    if (step.kind != StepKind::compute) index_of.emplace(communication_type_of(step), 0);
  for (auto& [type, index] : index_of) {
    index = breakdown.types.size();
    breakdown.types.push_back(CommunicationTotals{type});
  }

  std::vector<Boundary> boundaries;
  boundaries.reserve(2 * timings.size());
  for (std::size_t i = 0; i < timings.size(); ++i) {
    const ScheduleStep& step = schedule.steps[i];
    // A stamp may trail its predecessor's by a sweep's jitter; an item never ends before
    // it could start.
    const double ready = std::max(0.0, timings[i].ready_seconds);
    const double end = std::max(ready, timings[i].end_seconds);
    breakdown.step_seconds = std::max(breakdown.step_seconds, end);
    int who = -1;
    if (step.kind != StepKind::compute) {
      const std::size_t index = index_of.at(communication_type_of(step));
      CommunicationTotals& totals = breakdown.types[index];
      totals.count += 1;
      totals.bytes += step.bytes;
      totals.seconds += end - ready;
      breakdown.communication_seconds += end - ready;
      who = static_cast<int>(index);
    }
    // A compute step of no time is not run (its end is only its stream's order), so it
    // hides nothing: the stamp jitter between its ready and end is not compute.
    const bool runs = step.kind != StepKind::compute || step.compute_seconds > 0;
    if (end > ready && runs) {
      boundaries.push_back({ready, +1, who});
      boundaries.push_back({end, -1, who});
    }
  }
  // Closing before opening at the same instant: touching intervals do not overlap.
  std::sort(boundaries.begin(), boundaries.end(),
            [](const Boundary& a, const Boundary& b) { return std::tie(a.at, a.change) < std::tie(b.at, b.change); });

  std::vector<int> open_per_type(breakdown.types.size(), 0);
  int open_compute = 0;
  int open_types = 0;  // types with at least one open item
  double previous = 0;
  const auto account_stretch = [&](double until) {
    const double length = until - previous;
    if (length <= 0) return;
    if (open_compute > 0) breakdown.compute_seconds += length;
    if (open_types > 0) breakdown.communication_busy_seconds += length;
    if (open_compute == 0) {
      breakdown.exposed_seconds += length;
      if (open_types == 0) {
        breakdown.unattributed_exposed_seconds += length;
      } else {
        for (std::size_t t = 0; t < open_per_type.size(); ++t)
          if (open_per_type[t] > 0) breakdown.types[t].exposed_seconds += length / open_types;
      }
    }
  };
  for (const Boundary& boundary : boundaries) {
    account_stretch(boundary.at);
    previous = std::max(previous, boundary.at);
    if (boundary.who < 0) {
      open_compute += boundary.change;
      continue;
    }
    int& open = open_per_type[static_cast<std::size_t>(boundary.who)];
    if (open == 0 && boundary.change > 0) ++open_types;
    open += boundary.change;
    if (open == 0 && boundary.change < 0) --open_types;
  }
  // Before the first item could start and after the last boundary nothing ran; from the
  // origin to the first item is exposed only when nothing computed (it is host overhead).
  account_stretch(breakdown.step_seconds);
  return breakdown;
}

StepBreakdown mean_of(std::span<const StepBreakdown> steps) {
  StepBreakdown mean;
  if (steps.empty()) return mean;
  const double count = static_cast<double>(steps.size());
  std::map<CommunicationType, CommunicationTotals> types;
  for (const StepBreakdown& step : steps) {
    mean.step_seconds += step.step_seconds / count;
    mean.compute_seconds += step.compute_seconds / count;
    mean.communication_seconds += step.communication_seconds / count;
    mean.communication_busy_seconds += step.communication_busy_seconds / count;
    mean.exposed_seconds += step.exposed_seconds / count;
    mean.unattributed_exposed_seconds += step.unattributed_exposed_seconds / count;
    for (const CommunicationTotals& totals : step.types) {
      CommunicationTotals& sum = types.try_emplace(totals.type, CommunicationTotals{totals.type}).first->second;
      // Every step runs the same schedule: counts and bytes are the same each time.
      sum.count = totals.count;
      sum.bytes = totals.bytes;
      sum.seconds += totals.seconds / count;
      sum.exposed_seconds += totals.exposed_seconds / count;
    }
  }
  for (auto& [type, totals] : types) mean.types.push_back(totals);
  return mean;
}

}  // namespace commbench
