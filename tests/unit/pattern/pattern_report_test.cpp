// The verdict's rules on hand-made breakdowns: compute-bound below 10 % exposed, latency-
// against bandwidth-bound from the half-peak size, busbw against the theoretical figure,
// and the NIC load of groups that span nodes.
#include "commbench/pattern/pattern_report.hpp"

#include <gtest/gtest.h>

namespace commbench {
namespace {

const CommunicationType kDataAllreduce{StepKind::collective, Collective::allreduce, GroupRole::data};

StepBreakdown one_type_step(double step_seconds, double compute_seconds, std::uint64_t count, std::uint64_t bytes,
                            double seconds) {
  StepBreakdown step;
  step.step_seconds = step_seconds;
  step.compute_seconds = compute_seconds;
  step.exposed_seconds = step_seconds - compute_seconds;
  step.communication_seconds = seconds;
  step.types = {CommunicationTotals{kDataAllreduce, count, bytes, seconds, step.exposed_seconds}};
  return step;
}

GroupBandwidth four_ranks(int nodes, std::optional<double> gbps) {
  return GroupBandwidth{4, nodes, gbps, gbps, "test"};
}

TEST(PatternReport, LittleExposedIsComputeBound) {
  const StepBreakdown step = one_type_step(1.0, 0.95, 10, 10 << 20, 0.5);
  const PatternReport report = build_pattern_report(step, {}, {{kDataAllreduce, four_ranks(1, 100.0)}}, NicModel{});
  EXPECT_EQ(report.bound, StepBound::compute);
  EXPECT_NE(report.top_cause.find("compute"), std::string::npos);
  EXPECT_FALSE(report.nic.crosses_nodes);
}

TEST(PatternReport, LargeCollectivesBelowTheModelAreBandwidthBound) {
  // 10 x 100 MB in 1 s: algbw 1 GB/s, busbw 1.5 GB/s on 4 ranks, far below 100 GB/s.
  const StepBreakdown step = one_type_step(1.0, 0.0, 10, 1'000'000'000, 1.0);
  const PatternReport report =
      build_pattern_report(step, {{kDataAllreduce, 100'000'000}}, {{kDataAllreduce, four_ranks(1, 2.0)}}, NicModel{});
  ASSERT_EQ(report.types.size(), 1u);
  EXPECT_DOUBLE_EQ(report.types[0].algbw_gbps, 1.0);
  EXPECT_DOUBLE_EQ(report.types[0].busbw_gbps, 1.5);
  EXPECT_DOUBLE_EQ(*report.types[0].efficiency, 0.75);
  EXPECT_FALSE(report.types[0].latency_bound);
  EXPECT_EQ(report.bound, StepBound::bandwidth);
  EXPECT_NE(report.top_cause.find("allreduce/data"), std::string::npos);
}

TEST(PatternReport, ManySmallCollectivesAreLatencyBound) {
  // 10 000 x 4 KiB in 1 s: 100 us each where 4 KiB at 100 GB/s takes 0.06 us.
  const StepBreakdown step = one_type_step(1.0, 0.0, 10'000, 10'000 * 4096ull, 1.0);
  const PatternReport report =
      build_pattern_report(step, {{kDataAllreduce, 4096}}, {{kDataAllreduce, four_ranks(1, 100.0)}}, NicModel{});
  EXPECT_TRUE(report.types[0].latency_bound);
  EXPECT_GT(*report.types[0].half_peak_bytes, 4096.0);
  EXPECT_EQ(report.bound, StepBound::latency);
}

TEST(PatternReport, WithoutATheoreticalFigureTheSizeFallbackDecides) {
  const StepBreakdown step = one_type_step(1.0, 0.0, 100, 100 * 1024ull, 1.0);
  const PatternReport small = build_pattern_report(step, {{kDataAllreduce, 1024}}, {}, NicModel{});
  EXPECT_TRUE(small.types[0].latency_bound);
  const PatternReport large = build_pattern_report(step, {{kDataAllreduce, 1 << 20}}, {}, NicModel{});
  EXPECT_FALSE(large.types[0].latency_bound);
}

TEST(PatternReport, GroupsAcrossNodesLoadTheNics) {
  // 8 GB of allreduce over 4 ranks on 2 nodes: 1.5 x 8 GB leave each node per 1 s step,
  // over 4 NICs of 25 GB/s: 3 GB/s each.
  const StepBreakdown step = one_type_step(1.0, 0.0, 8, 8'000'000'000, 1.0);
  const PatternReport report =
      build_pattern_report(step, {}, {{kDataAllreduce, four_ranks(2, 100.0)}}, NicModel{4, 25.0, "4 ports"});
  EXPECT_TRUE(report.nic.crosses_nodes);
  EXPECT_DOUBLE_EQ(report.nic.gbps_per_nic, 3.0);
  EXPECT_NE(report.nic.text.find("of 25 GB/s"), std::string::npos) << report.nic.text;
}

TEST(PatternReport, PipelineBubbleMeasuredBesideTheIdeal) {
  StepBreakdown step;
  step.step_seconds = 1.0;
  step.compute_seconds = 0.7;
  const auto bubble = pipeline_bubble(4, 8, 1, step);
  ASSERT_TRUE(bubble);
  EXPECT_DOUBLE_EQ(bubble->measured, 0.3);
  EXPECT_DOUBLE_EQ(bubble->ideal, 3.0 / 11.0);                          // (P - 1) / (M + P - 1)
  EXPECT_DOUBLE_EQ(pipeline_bubble(4, 8, 2, step)->ideal, 3.0 / 19.0);  // interleaved: v x M
  EXPECT_FALSE(pipeline_bubble(1, 8, 1, step));                         // no stages, no bubble
}

TEST(PatternReport, EachTypesMedianSizeIsTheStatisticsModulesMedian) {
  RankSchedule schedule;
  for (const std::uint64_t bytes : {10u, 1000u, 20u, 30u}) {
    ScheduleStep step;
    step.kind = StepKind::collective;
    step.group = GroupRole::data;
    step.op = Collective::allreduce;
    step.bytes = bytes;
    schedule.steps.push_back(step);
  }
  ScheduleStep compute;  // not communication: no size of its own
  compute.bytes = 1u << 30;
  schedule.steps.push_back(compute);
  const auto medians = median_sizes(schedule);
  ASSERT_EQ(medians.size(), 1u);
  EXPECT_EQ(medians.at(kDataAllreduce), 25u);  // the mean of the middle two, 20 and 30
  schedule.steps.pop_back();
  schedule.steps.pop_back();  // 10, 1000, 20
  EXPECT_EQ(median_sizes(schedule).at(kDataAllreduce), 20u);
}

}  // namespace
}  // namespace commbench
