// Issue 55: a soak's events are stretches of time below the level. A fault makes fewer
// readings the worse it is (a round held up by a throttled link is one long reading), so
// a reading far longer than the soak's cadence counts for the time it covers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "commbench/validate/simulated_cluster.hpp"
#include "commbench/validate/soak_events.hpp"
#include "commbench/validate/soak_run.hpp"

namespace commbench {
namespace {

// Readings of 4 nodes, one interval a second, cycling through the 3 rounds of the
// all-pairs schedule (node 2 meets 3, then 0, then 1), every pair at 10 GB/s, except that
// the rounds of `held` last `held_s` seconds each, and the pairs with node 2 in them read
// `slow` GB/s. Intervals start when the previous one ends, or on the next second.
std::vector<SoakReading> readings_with_held_rounds(const std::vector<int>& held, double held_s, double slow) {
  const std::vector<std::vector<std::pair<int, int>>> rounds{{{0, 1}, {2, 3}}, {{0, 2}, {1, 3}}, {{0, 3}, {1, 2}}};
  std::vector<SoakReading> readings;
  double start = 0;
  for (int i = 0; i < 60; ++i) {
    const bool is_held = std::find(held.begin(), held.end(), i) != held.end();
    const double end = start + (is_held ? held_s : 0.3);
    for (const auto& [a, b] : rounds[static_cast<std::size_t>(i % 3)])
      readings.push_back({i, start, end, a, b, is_held && (a == 2 || b == 2) ? slow : 10 + 0.01 * (i % 7)});
    start = std::max(end, start + 1);
  }
  return readings;
}

std::vector<SoakEvent> events_of(const std::vector<SoakReading>& readings) {
  const SoakRule rule;
  return find_soak_events(readings, {}, soak_levels(readings, rule), rule);
}

TEST(SoakTime, TwoLongReadingsOfOneNodeAreANodeEventOverTheirTime) {
  // Rounds 25 and 26 held for 7.5 s each: node 2 low with node 0, then node 1, from 25 s to 40 s.
  const std::vector<SoakReading> readings = readings_with_held_rounds({25, 26}, 7.5, 0.4);
  const std::vector<SoakEvent> events = events_of(readings);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, FaultKind::node);
  EXPECT_EQ(events[0].nodes, std::vector<int>{2});
  EXPECT_DOUBLE_EQ(events[0].start_s, 25);
  EXPECT_DOUBLE_EQ(events[0].end_s, 40);
  EXPECT_EQ(events[0].low_readings, 2);
  EXPECT_DOUBLE_EQ(events[0].low_weight, 15);
  EXPECT_TRUE(events[0].fails);
}

TEST(SoakTime, OneReadingOverTheWholeDipIsAnEventOnItsPair) {
  // One round held for 15 s: the dip's time is there, but one reading cannot say which of
  // its two ends was slow.
  const std::vector<SoakEvent> events = events_of(readings_with_held_rounds({25}, 15, 0.05));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, FaultKind::link);
  EXPECT_EQ(events[0].nodes, (std::vector<int>{0, 2}));
  EXPECT_DOUBLE_EQ(events[0].start_s, 25);
  EXPECT_DOUBLE_EQ(events[0].end_s, 40);
  EXPECT_NEAR(events[0].depth, 0.995, 0.001);
}

TEST(SoakTime, ReadingsOfUsualLengthCountOneEach) {
  // Two low rounds of 2 s (a process stalled for a moment): under three cadences, so two
  // readings, too few for a node, and a different pair each, no link.
  EXPECT_TRUE(events_of(readings_with_held_rounds({25, 26}, 2, 0.4)).empty());
}

SoakOutcome simulated_soak(const std::string& degrade, int nodes, std::uint64_t seed) {
  SimulationModel model;
  model.nodes = nodes;
  model.seed = seed;
  SimulatedCluster cluster(
      model, degrade.empty() ? std::vector<Degradation>{} : parse_degradations(degrade, nodes, 0.25, "--degrade"));
  SoakSettings settings;
  settings.duration_s = 60;
  settings.seed = seed;
  return run_soak(cluster, settings, [](const SoakInterval&) {});
}

TEST(SoakTime, SimulatedReadingsStretchWithTheSlowdown) {
  // 64 MiB x 12 at 0.2 % of 50 GB/s: 8 s a reading. One window opening mid-reading slows
  // only what is left of it; one closing ends it soon after.
  const SoakOutcome outcome = simulated_soak("node:2@0.002/25-40", 4, 1);
  double longest = 0;
  for (const SoakReading& reading : outcome.readings) longest = std::max(longest, reading.end_s - reading.start_s);
  EXPECT_GT(longest, 7);
  for (const SoakReading& reading : outcome.readings)
    if (reading.start_s < 40 && reading.end_s > 40) EXPECT_LT(reading.end_s, 41) << reading.start_s;
}

TEST(SoakTime, AFifteenSecondDipIsFoundAndTheNodeNamedOnEverySeed) {
  for (const char* degrade : {"node:2@0.002/25-40", "node:2@0.004/25-40", "node:2@0.01/25-40"})
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
      SCOPED_TRACE(std::string(degrade) + " seed " + std::to_string(seed));
      const SoakOutcome outcome = simulated_soak(degrade, 4, seed);
      ASSERT_EQ(outcome.events.size(), 1u);
      EXPECT_EQ(outcome.events[0].kind, FaultKind::node);
      EXPECT_EQ(outcome.events[0].nodes, std::vector<int>{2});
      EXPECT_NEAR(outcome.events[0].start_s, 25, 3);
      EXPECT_NEAR(outcome.events[0].end_s, 40, 3);
      EXPECT_EQ(soak_exit_code(outcome), 1);
    }
}

TEST(SoakTime, HealthySoaksStayCleanOnEverySeed) {
  for (const int nodes : {4, 8})
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
      const SoakOutcome outcome = simulated_soak("", nodes, seed);
      EXPECT_TRUE(outcome.events.empty()) << nodes << " nodes, seed " << seed;
      EXPECT_EQ(soak_exit_code(outcome), 0);
    }
}

}  // namespace
}  // namespace commbench
