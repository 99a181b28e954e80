#include <gtest/gtest.h>

#include "commbench/core/stopping_rule.hpp"

namespace commbench {
namespace {

TimingProgress progress(std::uint64_t samples, std::uint64_t iterations, double noise, double elapsed) {
  return TimingProgress{samples, iterations, noise, elapsed};
}

TEST(StoppingRule, FixedIterationsIgnoreNoiseAndTime) {
  StoppingCriteria c;
  c.fixed_iterations = 20;
  const StoppingRule rule(c);
  EXPECT_TRUE(rule.wants_more(progress(1, 19, 0.0, 100.0)));
  EXPECT_EQ(rule.evaluate(progress(2, 20, 0.5, 0.0)), StopReason::fixed_count_reached);
  // Batches are capped so exactly 20 iterations run.
  EXPECT_EQ(rule.next_batch(progress(1, 16, 0, 0), 8), 4u);
  EXPECT_EQ(rule.next_batch(progress(2, 20, 0, 0), 8), 0u);
}

TEST(StoppingRule, AdaptiveNeedsTheSampleFloorFirst) {
  StoppingCriteria c;
  c.min_samples = 10;
  c.target_noise = 0.01;
  c.max_seconds = 1.0;
  const StoppingRule rule(c);
  EXPECT_TRUE(rule.wants_more(progress(9, 900, 0.0001, 5.0)));  // quiet and late, but below the floor
  EXPECT_EQ(rule.evaluate(progress(10, 1000, 0.01, 0.1)), StopReason::noise_target_met);
  EXPECT_TRUE(rule.wants_more(progress(10, 1000, 0.0101, 0.5)));
  EXPECT_EQ(rule.evaluate(progress(50, 5000, 0.05, 1.0)), StopReason::time_limit);
  EXPECT_EQ(rule.next_batch(progress(3, 300, 0.1, 0.1), 100), 100u);
  EXPECT_EQ(rule.next_batch(progress(3, 300, 0.1, 0.1), 0), 1u);
}

}  // namespace
}  // namespace commbench
