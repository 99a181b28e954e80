#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "commbench/core/statistics.hpp"

namespace commbench {
namespace {

TEST(Statistics, HandComputedSummary) {
  const std::vector<double> samples{4.0, 1.0, 3.0, 2.0};
  const SampleSummary s = summarize(samples);
  EXPECT_EQ(s.count, 4u);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 4.0);
  // Sample variance: (2.25 + 0.25 + 0.25 + 2.25) / 3 = 5/3.
  EXPECT_NEAR(s.stddev, std::sqrt(5.0 / 3.0), 1e-12);
  EXPECT_NEAR(s.relative_stddev, std::sqrt(5.0 / 3.0) / 2.5, 1e-12);
  EXPECT_NEAR(s.relative_error, std::sqrt(5.0 / 3.0) / 2.5 / 2.0, 1e-12);
  EXPECT_DOUBLE_EQ(s.p50, 2.5);
  EXPECT_NEAR(s.p99, 3.97, 1e-12);  // 1 + 0.99*3 = 3.97 -> between 3 and 4
}

TEST(Statistics, EdgeCases) {
  EXPECT_EQ(summarize(std::vector<double>{}).count, 0u);
  const SampleSummary one = summarize(std::vector<double>{7.0});
  EXPECT_DOUBLE_EQ(one.mean, 7.0);
  EXPECT_DOUBLE_EQ(one.p99, 7.0);
  EXPECT_DOUBLE_EQ(one.relative_error, 0.0);
  const SampleSummary flat = summarize(std::vector<double>{3.0, 3.0, 3.0});
  EXPECT_DOUBLE_EQ(flat.relative_stddev, 0.0);
}

TEST(Statistics, MedianOfOddEvenAndNoValues) {
  EXPECT_DOUBLE_EQ(median_of({3.0, 1.0, 2.0}), 2.0);
  EXPECT_DOUBLE_EQ(median_of({4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_DOUBLE_EQ(median_of({}), 0.0);
}

TEST(Statistics, PercentileInterpolation) {
  const std::vector<double> sorted{10, 20, 30, 40, 50, 60, 70, 80, 90, 100};
  EXPECT_DOUBLE_EQ(percentile_of_sorted(sorted, 0.0), 10);
  EXPECT_DOUBLE_EQ(percentile_of_sorted(sorted, 1.0), 100);
  EXPECT_DOUBLE_EQ(percentile_of_sorted(sorted, 0.5), 55);
  EXPECT_NEAR(percentile_of_sorted(sorted, 0.99), 99.1, 1e-9);
}

}  // namespace
}  // namespace commbench
