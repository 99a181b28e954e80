#include "commbench/core/stopping_rule.hpp"

#include <algorithm>
#include <array>

#include "commbench/core/name_lookup.hpp"

namespace commbench {

namespace {

// keep_going is no reason to stop: it has no name.
using NamedReason = detail::NamedValue<StopReason>;
constexpr std::array kReasonNames{NamedReason{"fixed_count", StopReason::fixed_count},
                                  NamedReason{"noise_target", StopReason::noise_target},
                                  NamedReason{"time_limit", StopReason::time_limit}};

}  // namespace

std::string_view name_of(StopReason reason) { return detail::name_in<StopReason>(kReasonNames, reason, ""); }

std::uint64_t StoppingCriterion::next_batch(const TimingProgress&, std::uint64_t preferred) const {
  return std::max<std::uint64_t>(preferred, 1);
}

StopReason FixedCountCriterion::evaluate(const TimingProgress& progress) const {
  return progress.iterations >= iterations_ ? StopReason::fixed_count : StopReason::keep_going;
}

std::uint64_t FixedCountCriterion::next_batch(const TimingProgress& progress, std::uint64_t preferred) const {
  const std::uint64_t left = iterations_ > progress.iterations ? iterations_ - progress.iterations : 0;
  return std::min(std::max<std::uint64_t>(preferred, 1), left);
}

StopReason RelativeNoiseCriterion::evaluate(const TimingProgress& progress) const {
  if (progress.samples < min_samples_) return StopReason::keep_going;
  if (progress.relative_noise <= target_noise_) return StopReason::noise_target;
  if (progress.elapsed_seconds >= max_seconds_) return StopReason::time_limit;
  return StopReason::keep_going;
}

std::unique_ptr<StoppingCriterion> make_stopping_criterion(const StoppingCriteria& criteria) {
  if (criteria.fixed_iterations > 0) return std::make_unique<FixedCountCriterion>(criteria.fixed_iterations);
  return std::make_unique<RelativeNoiseCriterion>(criteria.min_samples, criteria.target_noise, criteria.max_seconds);
}

}  // namespace commbench
