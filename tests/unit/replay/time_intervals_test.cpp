// Interval lists kept merged as a trace's events come: the time they cover must be the
// union's whatever the order, and a list that came nearly in order needs no sorted copy.
#include "time_intervals.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace commbench {
namespace {

TEST(TimeIntervals, IntervalsALittleOutOfOrderAreKeptMergedInTheirPlace) {
  std::vector<TimeInterval> list;
  // Two streams' kernels, each written as it ends: the second stream's start a little
  // before the first's last.
  for (const TimeInterval interval : {TimeInterval{0, 10}, {20, 30}, {15, 18}, {40, 50}, {35, 41}, {60, 61}, {5, 16}})
    add_interval(list, interval);
  EXPECT_TRUE(is_merged(list));
  EXPECT_EQ(list, (std::vector<TimeInterval>{{0, 18}, {20, 30}, {35, 50}, {60, 61}}));
  EXPECT_DOUBLE_EQ(total_length(list), 18 + 10 + 15 + 1);
}

TEST(TimeIntervals, AnyOrderCoversTheUnionOnceMerged) {
  std::mt19937 random(7);
  std::uniform_real_distribution<double> start(0, 10000), length(0, 30);
  std::vector<TimeInterval> given;
  for (int i = 0; i < 3000; ++i) {
    const double s = start(random);
    given.emplace_back(s, s + length(random));
  }
  // Nearly sorted (a window's worth of disorder), and in any order at all.
  std::vector<TimeInterval> nearly = given;
  std::sort(nearly.begin(), nearly.end());
  for (std::size_t i = 0; i + 8 < nearly.size(); i += 8) std::reverse(nearly.begin() + i, nearly.begin() + i + 8);
  const double truth = total_length(merged_intervals(given));
  for (const std::vector<TimeInterval>* order : {&nearly, &given}) {
    std::vector<TimeInterval> list;
    for (const TimeInterval& interval : *order) add_interval(list, interval);
    EXPECT_NEAR(total_length(merged_intervals(list)), truth, 1e-6);
    if (order == &nearly) EXPECT_TRUE(is_merged(list));
  }
}

}  // namespace
}  // namespace commbench
