#include "commbench/core/reading_budget.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace commbench {
namespace {

TEST(ReadingBudget, ThreeTimesWhatTheExpectedRateNeedsForEveryPlannedIteration) {
  ReadingBudget budget;
  budget.planned_iterations = 13;  // 2 warm-up, 1 calibration, 10 timed
  // 64 MiB at 0.5 GB/s: 0.134217728 s an iteration; 3 x 13 x that = 5.234491392 s.
  budget.expected_iteration_seconds = 67108864 / 0.5e9;
  EXPECT_DOUBLE_EQ(reading_budget_seconds(budget, std::numeric_limits<double>::infinity()), 5.234491392);
  // A faster rank in the reading sets a tighter budget: 3 x 13 x 0.1 s = 3.9 s.
  EXPECT_DOUBLE_EQ(reading_budget_seconds(budget, 0.1), 3.9);
  // A slower one does not loosen it.
  EXPECT_DOUBLE_EQ(reading_budget_seconds(budget, 10.0), 5.234491392);
}

TEST(ReadingBudget, AtLeastTheFloorAndUnboundedWhileNothingIsKnown) {
  ReadingBudget budget;
  budget.planned_iterations = 13;
  // 256 KiB at 0.5 GB/s: 3 x 13 x 0.000524288 s = 0.020447232 s, below the 1 s floor.
  EXPECT_DOUBLE_EQ(reading_budget_seconds(budget, 262144 / 0.5e9), 1.0);
  budget.floor_seconds = 0;
  EXPECT_DOUBLE_EQ(reading_budget_seconds(budget, 262144 / 0.5e9), 0.020447232);
  // No expected rate and no rank has finished an iteration yet: no limit.
  EXPECT_TRUE(std::isinf(reading_budget_seconds(budget, std::numeric_limits<double>::infinity())));
  budget.factor = 5;
  budget.expected_iteration_seconds = 0.2;
  EXPECT_DOUBLE_EQ(reading_budget_seconds(budget, std::numeric_limits<double>::infinity()), 13.0);
}

TEST(ReadingBudget, ACutShortReadingIsScoredFromTheBytesItMoved) {
  // One 64 MiB iteration over a 50 Mbit/s link (6.25 MB/s): 10.73741824 s, 0.00625 GB/s.
  EXPECT_DOUBLE_EQ(moved_gbps(67108864, 1, 10.73741824), 0.00625);
  // Three iterations in 0.3 s: 3 x 67108864 B / 0.3 s = 0.67108864 GB/s.
  EXPECT_DOUBLE_EQ(moved_gbps(67108864, 3, 0.3), 0.67108864);
  EXPECT_EQ(moved_gbps(67108864, 0, 1.0), 0.0);  // nothing moved
  EXPECT_EQ(moved_gbps(67108864, 2, 0.0), 0.0);  // no time passed: no figure
}

}  // namespace
}  // namespace commbench
