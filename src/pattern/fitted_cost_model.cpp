#include "commbench/pattern/fitted_cost_model.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "commbench/core/error.hpp"

namespace commbench {
namespace {

struct Samples {
  std::vector<double> bytes;
  std::vector<double> seconds;
};

// Least squares of seconds on bytes, neither coefficient negative: with one size only
// (or a negative slope, which jitter on near-equal sizes gives) the line is the mean
// time per byte through the origin, and a negative intercept becomes 0 with the slope
// refitted through the origin.
FittedCostModel::Line fit(const Samples& samples) {
  const double count = static_cast<double>(samples.bytes.size());
  double mean_bytes = 0, mean_seconds = 0;
  for (std::size_t i = 0; i < samples.bytes.size(); ++i) {
    mean_bytes += samples.bytes[i] / count;
    mean_seconds += samples.seconds[i] / count;
  }
  double covariance = 0, variance = 0;
  for (std::size_t i = 0; i < samples.bytes.size(); ++i) {
    covariance += (samples.bytes[i] - mean_bytes) * (samples.seconds[i] - mean_seconds);
    variance += (samples.bytes[i] - mean_bytes) * (samples.bytes[i] - mean_bytes);
  }
  const auto through_origin = [&] {
    double weighted = 0, squares = 0;
    for (std::size_t i = 0; i < samples.bytes.size(); ++i) {
      weighted += samples.bytes[i] * samples.seconds[i];
      squares += samples.bytes[i] * samples.bytes[i];
    }
    return FittedCostModel::Line{0, squares > 0 ? weighted / squares : 0};
  };
  if (variance <= 0 || covariance <= 0) {
    // Equal sizes: nothing separates latency from bandwidth; all of it is per byte.
    if (mean_bytes > 0) return {0, mean_seconds / mean_bytes};
    return {mean_seconds, 0};
  }
  const double slope = covariance / variance;
  const double intercept = mean_seconds - slope * mean_bytes;
  if (intercept < 0) return through_origin();
  return {intercept, slope};
}

}  // namespace

FittedCostModel::FittedCostModel(const ParallelLayout& layout, const RankSchedule& schedule,
                                 std::span<const ItemTiming> timings) {
  if (timings.size() != schedule.steps.size())
    throw UsageError(fmt::format("cost fit: {} timings for {} steps", timings.size(), schedule.steps.size()));
  std::map<std::tuple<StepKind, Collective, int>, Samples> samples;
  for (std::size_t i = 0; i < timings.size(); ++i) {
    const ScheduleStep& step = schedule.steps[i];
    if (step.kind == StepKind::compute) continue;
    const bool peer = step.kind == StepKind::peer;
    const int ranks = peer ? 2 : static_cast<int>(layout.members(step.group, schedule.world_rank).size());
    const std::uint64_t bytes = peer ? schedule.peer_rounds.at(step.peer_round).message_bytes : step.bytes;
    Samples& kind = samples[{step.kind, peer ? Collective::sendrecv : step.op, ranks}];
    kind.bytes.push_back(static_cast<double>(bytes));
    kind.seconds.push_back(std::max(0.0, timings[i].end_seconds - std::max(0.0, timings[i].ready_seconds)));
  }
  for (const auto& [key, kind] : samples) lines_[key] = fit(kind);
}

double FittedCostModel::seconds(const CommunicationCostQuery& query) const {
  const auto line = lines_.find({query.kind, query.op, query.ranks});
  if (line == lines_.end())
    throw UsageError(fmt::format("cost fit: the measured step had no {} over {} ranks", name_of(query.op), query.ranks));
  return line->second.latency_seconds + line->second.seconds_per_byte * static_cast<double>(query.bytes);
}

}  // namespace commbench
