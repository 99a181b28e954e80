// When to stop timing one measurement. A stopping criterion is evaluated on every rank
// with its own samples; the measurement loop combines the answers collectively ("continue
// while any rank wants more") so that all ranks run the same number of batches and never
// diverge. Criteria are pluggable (nvbench's stopping_criterion): a command picks one, and
// every row records which condition ended its measurement (the stop_reason column).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

namespace commbench {

// What the user asked for (-n, --max-time, --target-noise, --min-samples).
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
  double elapsed_seconds = 0;    // wall time spent on this measurement's timing
};

// Ordered by how much a row's time should be doubted: when ranks stopped for different
// reasons, the row reports the largest (docs/methodology.md, "Why a measurement stopped").
enum class StopReason { keep_going, fixed_count, noise_target, time_limit };

// "fixed_count", "noise_target", "time_limit" (the stop_reason column); "" for keep_going.
std::string_view name_of(StopReason reason);

class StoppingCriterion {
 public:
  virtual ~StoppingCriterion() = default;
  virtual StopReason evaluate(const TimingProgress& progress) const = 0;
  bool wants_more(const TimingProgress& progress) const { return evaluate(progress) == StopReason::keep_going; }
  // Iterations for the next batch given the loop's `preferred` size (never 0 while the
  // criterion wants more).
  virtual std::uint64_t next_batch(const TimingProgress& progress, std::uint64_t preferred) const;
  // Whether the loop may re-size batches from what it measured: a fixed count keeps the
  // batches it was given, so the iteration count stays exact.
  virtual bool resizes_batches() const { return true; }
};

// -n N: exactly N timed iterations.
class FixedCountCriterion final : public StoppingCriterion {
 public:
  explicit FixedCountCriterion(std::uint64_t iterations) : iterations_(iterations) {}
  StopReason evaluate(const TimingProgress& progress) const override;
  std::uint64_t next_batch(const TimingProgress& progress, std::uint64_t preferred) const override;
  bool resizes_batches() const override { return false; }

 private:
  std::uint64_t iterations_;
};

// Adaptive: at least min_samples batches, then stop once the relative standard error of
// the mean is at most target_noise, or once max_seconds of timing have passed.
class RelativeNoiseCriterion final : public StoppingCriterion {
 public:
  RelativeNoiseCriterion(std::uint64_t min_samples, double target_noise, double max_seconds)
      : min_samples_(min_samples), target_noise_(target_noise), max_seconds_(max_seconds) {}
  StopReason evaluate(const TimingProgress& progress) const override;

 private:
  std::uint64_t min_samples_;
  double target_noise_;
  double max_seconds_;
};

// The criterion the user's flags ask for.
std::unique_ptr<StoppingCriterion> make_stopping_criterion(const StoppingCriteria& criteria);

}  // namespace commbench
