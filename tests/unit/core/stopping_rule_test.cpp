#include "commbench/core/stopping_rule.hpp"

#include <gtest/gtest.h>

namespace commbench {
namespace {

TimingProgress progress(std::uint64_t samples, std::uint64_t iterations, double noise, double elapsed) {
  return TimingProgress{samples, iterations, noise, elapsed};
}

TEST(FixedCountCriterion, IgnoresNoiseAndTimeAndCapsTheLastBatch) {
  const FixedCountCriterion criterion(20);
  EXPECT_TRUE(criterion.wants_more(progress(1, 19, 0.0, 100.0)));
  EXPECT_EQ(criterion.evaluate(progress(2, 20, 0.5, 0.0)), StopReason::fixed_count);
  // Batches are capped so exactly 20 iterations run, and never re-sized.
  EXPECT_EQ(criterion.next_batch(progress(1, 16, 0, 0), 8), 4u);
  EXPECT_EQ(criterion.next_batch(progress(2, 20, 0, 0), 8), 0u);
  EXPECT_FALSE(criterion.resizes_batches());
}

TEST(RelativeNoiseCriterion, NeedsTheSampleFloorThenStopsOnNoiseOrTime) {
  const RelativeNoiseCriterion criterion(10, 0.01, 1.0);
  EXPECT_TRUE(criterion.wants_more(progress(9, 900, 0.0001, 5.0)));  // quiet and late, but below the floor
  EXPECT_EQ(criterion.evaluate(progress(10, 1000, 0.01, 0.1)), StopReason::noise_target);
  EXPECT_TRUE(criterion.wants_more(progress(10, 1000, 0.0101, 0.5)));
  EXPECT_EQ(criterion.evaluate(progress(50, 5000, 0.05, 1.0)), StopReason::time_limit);
  // Quiet wins over late: a row that met its noise target says so.
  EXPECT_EQ(criterion.evaluate(progress(50, 5000, 0.001, 9.0)), StopReason::noise_target);
  EXPECT_EQ(criterion.next_batch(progress(3, 300, 0.1, 0.1), 100), 100u);
  EXPECT_EQ(criterion.next_batch(progress(3, 300, 0.1, 0.1), 0), 1u);
  EXPECT_TRUE(criterion.resizes_batches());
}

TEST(StoppingCriterion, TheFlagsPickTheCriterion) {
  StoppingCriteria fixed;
  fixed.fixed_iterations = 5;
  EXPECT_EQ(make_stopping_criterion(fixed)->evaluate(progress(1, 5, 1.0, 0.0)), StopReason::fixed_count);
  StoppingCriteria adaptive;
  adaptive.min_samples = 2;
  adaptive.target_noise = 0.02;
  EXPECT_EQ(make_stopping_criterion(adaptive)->evaluate(progress(2, 5, 0.02, 0.0)), StopReason::noise_target);
  EXPECT_EQ(make_stopping_criterion(adaptive)->evaluate(progress(2, 5, 0.03, 0.0)), StopReason::keep_going);
}

TEST(StopReason, ColumnNames) {
  EXPECT_EQ(name_of(StopReason::fixed_count), "fixed_count");
  EXPECT_EQ(name_of(StopReason::noise_target), "noise_target");
  EXPECT_EQ(name_of(StopReason::time_limit), "time_limit");
  EXPECT_EQ(name_of(StopReason::keep_going), "");
}

}  // namespace
}  // namespace commbench
