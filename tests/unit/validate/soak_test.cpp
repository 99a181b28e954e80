#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "commbench/cli/flag_values.hpp"
#include "commbench/core/record.hpp"
#include "commbench/validate/simulated_cluster.hpp"
#include "commbench/validate/soak_events.hpp"
#include "commbench/validate/soak_report.hpp"
#include "commbench/validate/soak_run.hpp"
#include "usage_error.hpp"

namespace commbench {
namespace {

using testing::usage_error_of;

// Readings of 4 nodes over `intervals` intervals of 1 s, cycling through the 3 rounds of
// the all-pairs schedule; `figure(interval, a, b)` gives each pair's GB/s.
template <typename Figure>
std::vector<SoakReading> cycled_readings(int intervals, Figure figure) {
  const std::vector<std::vector<std::pair<int, int>>> rounds{{{0, 1}, {2, 3}}, {{0, 2}, {1, 3}}, {{0, 3}, {1, 2}}};
  std::vector<SoakReading> readings;
  for (int i = 0; i < intervals; ++i)
    for (const auto& [a, b] : rounds[static_cast<std::size_t>(i % 3)])
      readings.push_back({i, static_cast<double>(i), i + 0.5, a, b, figure(i, a, b)});
  return readings;
}

// A small deterministic wobble, well inside the rule's spread.
double wobble(int interval, int a, int b) { return 10 + 0.2 * std::sin(interval * 1.7 + a * 0.9 + b * 2.3); }

std::vector<SoakEvent> events_of(const std::vector<SoakReading>& readings, const std::vector<SoakChange>& changes = {},
                                 SoakRule rule = {}) {
  return find_soak_events(readings, changes, soak_levels(readings, rule), rule);
}

TEST(SoakLevels, AreTheMedianAndTheScaledMedianAbsoluteDeviationOfTheLogarithms) {
  std::vector<SoakReading> readings;
  for (double gbps : {10 / 1.2, 10.0, 10.0, 12.0, 2.0}) readings.push_back({0, 0, 1, 0, 1, gbps});
  const SoakLevels levels = soak_levels(readings, {});
  EXPECT_NEAR(levels.steady_gbps, 10, 1e-9);
  // Deviations of the logs: ln 1.2, 0, 0, ln 1.2, ln 5: median ln 1.2, times 1.4826.
  EXPECT_NEAR(levels.spread, 1.4826 * std::log(1.2), 1e-9);
  // 4 spreads is more than 10 % of the level: the margin, as a ratio.
  EXPECT_NEAR(levels.low_below_gbps, 10 * std::exp(-4 * 1.4826 * std::log(1.2)), 1e-9);
  EXPECT_FALSE(levels.given);
  SoakRule given;
  given.steady_gbps = 20;
  const SoakLevels from_file = soak_levels(readings, given);
  EXPECT_DOUBLE_EQ(from_file.steady_gbps, 20);
  EXPECT_TRUE(from_file.given);
}

TEST(SoakLevels, AReadingOfNothingIsLowNotAnError) {
  std::vector<SoakReading> readings = cycled_readings(30, wobble);
  readings[10].gbps = 0;
  const SoakLevels levels = soak_levels(readings, {});
  EXPECT_GT(levels.low_below_gbps, 8);
  EXPECT_LT(levels.low_below_gbps, 9.1);
}

TEST(SoakLevels, AQuietFabricStillNeedsTheLeastDepth) {
  const std::vector<SoakReading> readings = cycled_readings(30, [](int, int, int) { return 10.0; });
  const SoakLevels levels = soak_levels(readings, {});
  EXPECT_DOUBLE_EQ(levels.spread, 0);
  EXPECT_NEAR(levels.low_below_gbps, 9, 1e-9);  // 10 % below, not any reading below 10
  EXPECT_TRUE(events_of(readings).empty());
}

TEST(SoakEvents, AHealthyRunHasNone) { EXPECT_TRUE(events_of(cycled_readings(60, wobble)).empty()); }

TEST(SoakEvents, ANodeSlowWithEveryPartnerIsANodeEventWithItsWindow) {
  const auto readings = cycled_readings(60, [](int i, int a, int b) {
    const bool slow = i >= 20 && i < 35 && (a == 2 || b == 2);
    return wobble(i, a, b) * (slow ? 0.2 : 1);
  });
  const std::vector<SoakEvent> events = events_of(readings);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, FaultKind::node);
  EXPECT_EQ(events[0].nodes, std::vector<int>{2});
  EXPECT_EQ(events[0].first_interval, 20);
  EXPECT_EQ(events[0].last_interval, 34);
  EXPECT_DOUBLE_EQ(events[0].start_s, 20);
  EXPECT_DOUBLE_EQ(events[0].end_s, 34.5);
  EXPECT_EQ(events[0].low_readings, 15);
  EXPECT_EQ(events[0].partners, (std::vector<int>{0, 1, 3}));
  EXPECT_NEAR(events[0].depth, 0.8, 0.03);
  EXPECT_TRUE(events[0].fails);
}

TEST(SoakEvents, ASlowNodesPartnersAreNotNamedForTheReadingsItDraggedDown) {
  // Node 2 slow from 20 to 34; node 0 also reads low with 3 and 1 once each (intervals 23
  // and 24), which with its low readings beside node 2 would make a run with 3 partners.
  const auto readings = cycled_readings(60, [](int i, int a, int b) {
    const bool slow = (i >= 20 && i < 35 && (a == 2 || b == 2)) || (i == 23 && a == 0) || (i == 24 && a == 0);
    return wobble(i, a, b) * (slow ? 0.2 : 1);
  });
  const std::vector<SoakEvent> events = events_of(readings);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].nodes, std::vector<int>{2});
}

TEST(SoakEvents, APairBesideASlowNodeIsNoLinkWhileTheNodeEventLasts) {
  // Node 2 slow from 20 to 34; the pair beside its pair reads low on two meetings of its own
  // meanwhile (0-3 meets in 23 and 26, beside 1-2), and again later, alone (50, 53).
  const auto readings = cycled_readings(60, [](int i, int a, int b) {
    const bool slow_node = i >= 20 && i < 35 && (a == 2 || b == 2);
    const bool beside = (i == 23 || i == 26 || i == 50 || i == 53) && a == 0 && b == 3;
    return wobble(i, a, b) * (slow_node ? 0.1 : beside ? 0.4 : 1);
  });
  const std::vector<SoakEvent> events = events_of(readings);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].nodes, std::vector<int>{2});
  EXPECT_EQ(events[1].kind, FaultKind::link);
  EXPECT_EQ(events[1].first_interval, 50);
}

TEST(SoakEvents, TwoNodesSlowAtOnceAreBothNamed) {
  const auto readings = cycled_readings(60, [](int i, int a, int b) {
    const bool slow = i >= 20 && i < 35 && (a == 1 || b == 1 || a == 3 || b == 3);
    return wobble(i, a, b) * (slow ? 0.2 : 1);
  });
  const std::vector<SoakEvent> events = events_of(readings);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].nodes, std::vector<int>{1});
  EXPECT_EQ(events[1].nodes, std::vector<int>{3});
}

TEST(SoakEvents, PairsSlowedInAThrottledNodesWakeAreNoNodeOfTheirOwn) {
  // One node's port shaped: node 2's pairs read a tenth of the steady rate, and every other
  // pair, run beside them on a busy host, a third. Node 2 is named; node 0, as low as its
  // partners 1 and 3 but a third as deep as node 2, is not.
  const auto readings = cycled_readings(60, [](int i, int a, int b) {
    if (i < 20 || i >= 35) return wobble(i, a, b);
    return wobble(i, a, b) * (a == 2 || b == 2 ? 0.1 : 0.33);
  });
  const std::vector<SoakEvent> events = events_of(readings);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, FaultKind::node);
  EXPECT_EQ(events[0].nodes, std::vector<int>{2});
}

TEST(SoakEvents, TooFewLowReadingsAreNoEvent) {
  // Two intervals of one node (a process stalled for two seconds), one meeting of a pair.
  const auto readings = cycled_readings(60, [](int i, int a, int b) {
    const bool slow = ((i == 30 || i == 31) && (a == 1 || b == 1)) || (i == 41 && a == 0 && b == 3);
    return wobble(i, a, b) * (slow ? 0.3 : 1);
  });
  EXPECT_TRUE(events_of(readings).empty());
  SoakRule eager;
  eager.least_node_readings = 2;
  eager.least_link_readings = 1;
  // A node needs two low readings beside its most frequent partner: node 1's two readings
  // are then two one-reading links.
  const std::vector<SoakEvent> events = events_of(readings, {}, eager);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].nodes, (std::vector<int>{0, 1}));
  EXPECT_EQ(events[1].nodes, (std::vector<int>{1, 3}));
  EXPECT_EQ(events[2].nodes, (std::vector<int>{0, 3}));
  EXPECT_EQ(events[2].kind, FaultKind::link);
}

TEST(SoakEvents, ASlowLinkThatDragsThePairBesideItOnceIsStillALink) {
  // Pair 0-3 slow from 20 to 34 (it meets in 20, 23, ..., 32); node 0 also reads low once
  // with node 1 (interval 24) between two of those meetings.
  const auto readings = cycled_readings(60, [](int i, int a, int b) {
    const bool slow = (i >= 20 && i < 35 && a == 0 && b == 3) || (i == 24 && a == 0 && b == 1);
    return wobble(i, a, b) * (slow ? 0.1 : 1);
  });
  const std::vector<SoakEvent> events = events_of(readings);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, FaultKind::link);
  EXPECT_EQ(events[0].nodes, (std::vector<int>{0, 3}));
}

TEST(SoakEvents, ASlowLinkWhoseEndReadsLessLowWithOthersIsALinkNotANode) {
  // Pair 1-2 slow from 20 to 34 (it meets in 20, 23, ..., 32); node 2 also reads low with
  // 3 and 0 in 21 and 22, less deep: with its low readings with 1 a run of four with
  // three partners, which only the depth tells from a slow node.
  const auto readings = cycled_readings(60, [](int i, int a, int b) {
    const bool link = i >= 20 && i < 35 && a == 1 && b == 2;
    const bool beside = (i == 21 && a == 2 && b == 3) || (i == 22 && a == 0 && b == 2);
    return wobble(i, a, b) * (link ? 0.1 : beside ? 0.35 : 1);
  });
  const std::vector<SoakEvent> events = events_of(readings);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, FaultKind::link);
  EXPECT_EQ(events[0].nodes, (std::vector<int>{1, 2}));
  EXPECT_EQ(events[0].first_interval, 20);
  EXPECT_EQ(events[0].last_interval, 32);
  // As deep as the link, the same readings are a slow node 2.
  const auto as_deep = cycled_readings(60, [](int i, int a, int b) {
    const bool link = i >= 20 && i < 35 && a == 1 && b == 2;
    const bool beside = (i == 21 && a == 2 && b == 3) || (i == 22 && a == 0 && b == 2);
    return wobble(i, a, b) * (link || beside ? 0.1 : 1);
  });
  const std::vector<SoakEvent> node = events_of(as_deep);
  ASSERT_FALSE(node.empty());
  EXPECT_EQ(node[0].kind, FaultKind::node);
  EXPECT_EQ(node[0].nodes, std::vector<int>{2});
}

TEST(SoakEvents, OneStalledReadingDoesNotHideASlowNode) {
  // Node 2 slow in 21-24 (partner 3 in 21 and 24, 0 in 22, 1 in 23); its reading with 0
  // read nothing (a stalled process). The depth is the repeated partner's, so 0 and 1
  // are alike with it and the node is named.
  const auto readings = cycled_readings(60, [](int i, int a, int b) {
    const bool slow = i >= 21 && i <= 24 && (a == 2 || b == 2);
    return wobble(i, a, b) * (!slow ? 1 : i == 22 ? 1e-6 : 0.2);
  });
  const std::vector<SoakEvent> events = events_of(readings);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, FaultKind::node);
  EXPECT_EQ(events[0].nodes, std::vector<int>{2});
  EXPECT_EQ(events[0].first_interval, 21);
  EXPECT_EQ(events[0].last_interval, 24);
}

TEST(SoakEvents, APairSlowOnlyWhenItsEndsMeetIsALinkEvent) {
  const auto readings = cycled_readings(60, [](int i, int a, int b) {
    const bool slow = i >= 20 && i < 35 && a == 0 && b == 3;
    return wobble(i, a, b) * (slow ? 0.3 : 1);
  });
  const std::vector<SoakEvent> events = events_of(readings);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, FaultKind::link);
  EXPECT_EQ(events[0].nodes, (std::vector<int>{0, 3}));
  // The pair meets in intervals 2, 5, 8, ...: 20, 23, ..., 32 are its slow ones.
  EXPECT_EQ(events[0].first_interval, 20);
  EXPECT_EQ(events[0].last_interval, 32);
  EXPECT_EQ(events[0].low_readings, 5);
  EXPECT_TRUE(events[0].partners.empty());
}

TEST(SoakEvents, AShallowDipIsReportedButPasses) {
  const auto readings = cycled_readings(60, [](int i, int a, int b) {
    const bool slow = i >= 10 && i < 20 && (a == 1 || b == 1);
    return wobble(i, a, b) * (slow ? 0.8 : 1);
  });
  const std::vector<SoakEvent> events = events_of(readings);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, FaultKind::node);
  EXPECT_FALSE(events[0].fails);  // 20 % below: above the 0.75 fraction
  SoakOutcome outcome;
  outcome.node_names = {"a", "b", "c", "d"};
  outcome.events = events;
  EXPECT_EQ(soak_exit_code(outcome), 0);
  EXPECT_EQ(outcome.exclude_line(), "");
}

TEST(SoakEvents, TwoSeparateDipsOfOneNodeAreTwoEvents) {
  const auto readings = cycled_readings(90, [](int i, int a, int b) {
    const bool slow = ((i >= 10 && i < 20) || (i >= 60 && i < 70)) && (a == 3 || b == 3);
    return wobble(i, a, b) * (slow ? 0.4 : 1);
  });
  const std::vector<SoakEvent> events = events_of(readings);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].first_interval, 10);
  EXPECT_EQ(events[1].first_interval, 60);
}

TEST(SoakEvents, OneReadingAboveTheLineInsideADipDoesNotSplitIt) {
  const auto readings = cycled_readings(60, [](int i, int a, int b) {
    const bool slow = i >= 10 && i < 30 && i != 20 && (a == 1 || b == 1);
    return wobble(i, a, b) * (slow ? 0.5 : 1);
  });
  const std::vector<SoakEvent> events = events_of(readings);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].first_interval, 10);
  EXPECT_EQ(events[0].last_interval, 29);
  EXPECT_EQ(events[0].low_readings, 19);
}

TEST(SoakEvents, CarryTheChangesOfTheirNodesAroundThem) {
  const auto readings = cycled_readings(
      60, [](int i, int a, int b) { return wobble(i, a, b) * ((i >= 20 && i < 30 && (a == 2 || b == 2)) ? 0.2 : 1); });
  const std::vector<SoakChange> changes{{19, 2, "eth0 rx_errors +40"},
                                        {25, 2, "mlx5_0:1 state ACTIVE -> DOWN"},
                                        {25, 1, "eth0 tx_dropped +1"},  // another node
                                        {40, 2, "eth0 rx_errors +2"}};  // long after
  const std::vector<SoakEvent> events = events_of(readings, changes);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].changes, (std::vector<std::string>{"eth0 rx_errors +40", "mlx5_0:1 state ACTIVE -> DOWN"}));
}

// The soak over the simulated cluster: the rounds, the clock, the records and the verdict.
SoakOutcome simulated_soak(int nodes, const std::string& degrade, double seconds, std::vector<SoakInterval>* seen) {
  SimulationModel model;
  model.nodes = nodes;
  model.message_bytes = 4 << 20;
  SimulatedCluster cluster(
      model, degrade.empty() ? std::vector<Degradation>{} : parse_degradations(degrade, nodes, 0.25, "--degrade"));
  SoakSettings settings;
  settings.duration_s = seconds;
  return run_soak(cluster, settings, [&](const SoakInterval& interval) {
    if (seen) seen->push_back(interval);
  });
}

TEST(SoakRun, MeasuresEveryNodeInEveryIntervalAndStreamsEachInterval) {
  std::vector<SoakInterval> seen;
  const SoakOutcome outcome = simulated_soak(6, "", 30, &seen);
  EXPECT_EQ(outcome.intervals, 30);  // one round a second
  EXPECT_EQ(outcome.schedule_rounds, 5);
  ASSERT_EQ(seen.size(), 30u);
  for (const SoakInterval& interval : seen) {
    std::set<int> nodes;
    for (const SoakReading& reading : interval.readings) nodes.insert({reading.first, reading.second});
    EXPECT_EQ(nodes.size(), 6u);
    EXPECT_DOUBLE_EQ(interval.start_s, interval.index);
  }
  // Every pair met within the 30 intervals (6 cycles of 5 rounds).
  std::set<std::pair<int, int>> pairs;
  for (const SoakReading& reading : outcome.readings) pairs.insert({reading.first, reading.second});
  EXPECT_EQ(pairs.size(), 15u);
  EXPECT_TRUE(outcome.events.empty());
  EXPECT_EQ(soak_exit_code(outcome), 0);
}

TEST(SoakRun, NamesTheNodeAndTheLinkThatDippedAndWhen) {
  const SoakOutcome outcome = simulated_soak(8, "node:3@0.3/40-60,link:1-5@0.5/80-95", 120, nullptr);
  ASSERT_EQ(outcome.events.size(), 2u);
  EXPECT_EQ(outcome.events[0].kind, FaultKind::node);
  EXPECT_EQ(outcome.events[0].nodes, std::vector<int>{3});
  EXPECT_NEAR(outcome.events[0].start_s, 40, 1.01);
  EXPECT_NEAR(outcome.events[0].end_s, 60, 1.01);
  EXPECT_EQ(outcome.events[1].kind, FaultKind::link);
  EXPECT_EQ(outcome.events[1].nodes, (std::vector<int>{1, 5}));
  EXPECT_GE(outcome.events[1].start_s, 80 - 1.01);
  EXPECT_LE(outcome.events[1].end_s, 95 + 1.01);
  EXPECT_EQ(soak_exit_code(outcome), 1);
  EXPECT_EQ(outcome.exclude_line(), "--exclude=node[03,05]");
  const std::vector<std::string> verdicts = soak_node_verdicts(outcome);
  EXPECT_EQ(verdicts[0], "ok");
  EXPECT_NE(verdicts[3].find("dipped with 7 partners from 40.0 s"), std::string::npos) << verdicts[3];
  EXPECT_NE(verdicts[1].find("link to node05 dipped"), std::string::npos) << verdicts[1];
}

TEST(SoakReport, RecordsHoldTheReadingsChangesAndEvents) {
  SoakInterval interval;
  interval.index = 4;
  interval.start_s = 4;
  interval.end_s = 4.25;
  interval.readings = {{4, 4, 4.25, 0, 1, 9.5}};
  interval.changes = {{4, 1, "eth0 rx_errors +3"}};
  interval.nics = {{1, "eth0", 500000000, 0.25, 3.5}, {0, "eth0", std::nullopt, 0.25, 0}};
  const std::vector<Record> records = soak_interval_records(interval, {"n0", "n1"});
  ASSERT_EQ(records.size(), 4u);
  const std::vector<const RecordKind*> kinds{&record_kind("interval"), &record_kind("event")};
  EXPECT_EQ(mixed_csv_header(kinds),
            "record,what,interval,start_s,end_s,node_a,node_b,nic,gbps,bytes,peak_gbps,detail,kind,start_utc,end_utc,"
            "low_readings,lowest_gbps,steady_gbps,depth,result,partners,changes");
  const std::string no_event(10, ',');
  EXPECT_EQ(mixed_csv_record_line(records[0], kinds), "interval,pair,4,4,4.25,n0,n1,,9.5,,," + no_event);
  EXPECT_EQ(mixed_csv_record_line(records[1], kinds), "interval,nic,4,4,4.25,n1,,eth0,2,500000000,3.5," + no_event);
  EXPECT_EQ(mixed_csv_record_line(records[2], kinds), "interval,nic,4,4,4.25,n0,,eth0,,,," + no_event);
  EXPECT_EQ(mixed_csv_record_line(records[3], kinds), "interval,change,4,4,4.25,n1,,,,,,eth0 rx_errors +3" + no_event);
}

TEST(SoakReport, UtcTextIsIso8601WithTenths) {
  EXPECT_EQ(utc_text(0, 0), "1970-01-01T00:00:00.0Z");
  EXPECT_EQ(utc_text(1795392000, 61.25), "2026-11-23T00:01:01.2Z");
}

TEST(Degradations, TakeATimeWindow) {
  const std::vector<Degradation> parsed = parse_degradations("node:2@0.5/10-25,link:0-1", 4, 0.25, "--degrade");
  ASSERT_EQ(parsed.size(), 2u);
  EXPECT_DOUBLE_EQ(parsed[0].from_s, 10);
  EXPECT_DOUBLE_EQ(parsed[0].until_s, 25);
  EXPECT_DOUBLE_EQ(parsed[0].factor, 0.5);
  EXPECT_TRUE(std::isinf(parsed[1].until_s));
  EXPECT_EQ(usage_error_of([] { parse_degradations("node:2/25-10", 4, 0.25, "--degrade"); }),
            "--degrade: 'node:2/25-10': the window after / is FROM-UNTIL in seconds, FROM < UNTIL");
}

TEST(DurationFlag, TakesSecondsMinutesHoursAndDays) {
  EXPECT_DOUBLE_EQ(parse_duration_seconds("90", "--soak"), 90);
  EXPECT_DOUBLE_EQ(parse_duration_seconds("90s", "--soak"), 90);
  EXPECT_DOUBLE_EQ(parse_duration_seconds("20m", "--soak"), 1200);
  EXPECT_DOUBLE_EQ(parse_duration_seconds("1.5h", "--soak"), 5400);
  EXPECT_DOUBLE_EQ(parse_duration_seconds("1d", "--soak"), 86400);
  EXPECT_EQ(usage_error_of([] { parse_duration_seconds("ten", "--soak"); }),
            "--soak: 'ten' is not a length of time (like 90s, 20m, 2h)");
  EXPECT_EQ(usage_error_of([] { parse_duration_seconds("0", "--soak"); }),
            "--soak: must be more than 0 and at most a year (got 0)");
  EXPECT_EQ(usage_error_of([] { parse_duration_seconds("2y", "--soak"); }),
            "--soak: '2y' is not a length of time (like 90s, 20m, 2h)");
}

TEST(TimeLimitFlag, ErrorsNameTheFlagTheLimitWasGivenTo) {
  EXPECT_DOUBLE_EQ(parse_timeout_seconds("0", "--time-limit"), 0);
  EXPECT_DOUBLE_EQ(parse_timeout_seconds("2.5"), 2.5);
  EXPECT_EQ(usage_error_of([] { parse_timeout_seconds("-1", "--time-limit"); }),
            "--time-limit: must be 0 (off) or a number of seconds up to a year (got -1)");
  EXPECT_EQ(usage_error_of([] { parse_timeout_seconds("-1"); }),
            "-T/--timeout: must be 0 (off) or a number of seconds up to a year (got -1)");
  EXPECT_NE(usage_error_of([] { parse_timeout_seconds("soon", "--export-timeout"); }).find("--export-timeout: "),
            std::string::npos);
}

}  // namespace
}  // namespace commbench
