// When to stop timing one case. The rule is evaluated on every rank with its own
// samples; the runner combines the answers collectively ("continue while any rank wants
// more") so that all ranks run the same number of batches and never diverge.
#pragma once

#include <cstdint>

namespace commbench {

struct StoppingCriteria {
  std::uint64_t fixed_iterations = 0;  // -n: exactly this many timed iterations; 0 = adaptive
  std::uint64_t min_samples = 10;      // adaptive floor of timed batches
  double target_noise = 0.01;          // stop once the mean's relative standard error is below this
  double max_seconds = 3.0;            // ... or once this much time was spent timing
};

struct TimingProgress {
  std::uint64_t samples = 0;     // batches timed so far
  std::uint64_t iterations = 0;  // operations timed so far
  double relative_noise = 0;     // relative standard error of the mean per-iteration time so far
  double elapsed_seconds = 0;    // wall time spent on this case's timing
};

enum class StopReason { keep_going, fixed_count_reached, noise_target_met, time_limit };

class StoppingRule {
 public:
  explicit StoppingRule(const StoppingCriteria& criteria) : criteria_(criteria) {}

  StopReason evaluate(const TimingProgress& progress) const;
  bool wants_more(const TimingProgress& progress) const { return evaluate(progress) == StopReason::keep_going; }
  // Iterations for the next batch: `preferred` in adaptive mode, capped by what is left
  // in fixed mode.
  std::uint64_t next_batch(const TimingProgress& progress, std::uint64_t preferred) const;

  const StoppingCriteria& criteria() const { return criteria_; }

 private:
  StoppingCriteria criteria_;
};

}  // namespace commbench
