#include "commbench/core/stopping_rule.hpp"

#include <algorithm>

namespace commbench {

StopReason StoppingRule::evaluate(const TimingProgress& p) const {
  if (criteria_.fixed_iterations > 0)
    return p.iterations >= criteria_.fixed_iterations ? StopReason::fixed_count_reached : StopReason::keep_going;
  if (p.samples < criteria_.min_samples) return StopReason::keep_going;
  if (p.relative_noise <= criteria_.target_noise) return StopReason::noise_target_met;
  if (p.elapsed_seconds >= criteria_.max_seconds) return StopReason::time_limit;
  return StopReason::keep_going;
}

std::uint64_t StoppingRule::next_batch(const TimingProgress& p, std::uint64_t preferred) const {
  preferred = std::max<std::uint64_t>(preferred, 1);
  if (criteria_.fixed_iterations == 0) return preferred;
  const std::uint64_t left = criteria_.fixed_iterations > p.iterations ? criteria_.fixed_iterations - p.iterations : 0;
  return std::min(preferred, left);
}

}  // namespace commbench
