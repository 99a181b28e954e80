// The step predictor on hand-made schedules whose timelines are worked out by hand: a
// collective waits for its slowest member, waits_for across streams, a pipeline's peer
// rounds, a schedule that cannot complete; and the one-rank-per-stage shortcut against
// simulating every rank.
#include "commbench/pattern/step_prediction.hpp"

#include <gtest/gtest.h>

#include "commbench/core/error.hpp"
#include "schedule_test_support.hpp"

namespace commbench {
namespace {

// Every collective lasts `collective_seconds`, every peer message `peer_seconds`.
class FixedCosts : public CommunicationCostModel {
 public:
  FixedCosts(double collective_seconds, double peer_seconds)
      : collective_seconds_(collective_seconds), peer_seconds_(peer_seconds) {}
  double seconds(const CommunicationCostQuery& query) const override {
    return query.kind == StepKind::peer ? peer_seconds_ : collective_seconds_;
  }
  std::string basis() const override { return "fixed"; }

 private:
  double collective_seconds_, peer_seconds_;
};

// A few microseconds plus the bytes at 10 GB/s: sizes matter, so stages differ.
class LinearCosts : public CommunicationCostModel {
 public:
  double seconds(const CommunicationCostQuery& query) const override {
    return 5e-6 + static_cast<double>(query.bytes) / 1e10;
  }
  std::string basis() const override { return "linear"; }
};

ScheduleStep compute_step(double seconds, std::vector<std::size_t> waits = {}) {
  ScheduleStep step;
  step.kind = StepKind::compute;
  step.stream = "compute";
  step.compute_seconds = seconds;
  step.waits_for = std::move(waits);
  return step;
}

ScheduleStep allreduce_step(std::vector<std::size_t> waits = {}) {
  ScheduleStep step;
  step.kind = StepKind::collective;
  step.stream = "data";
  step.op = Collective::allreduce;
  step.group = GroupRole::data;
  step.bytes = 1024;
  step.waits_for = std::move(waits);
  return step;
}

ScheduleStep peer_step(std::size_t round, std::vector<std::size_t> waits = {}) {
  ScheduleStep step;
  step.kind = StepKind::peer;
  step.stream = "pipeline";
  step.group = GroupRole::pipeline;
  step.peer_round = round;
  step.bytes = 4096;
  step.waits_for = std::move(waits);
  return step;
}

ParallelLayout data_parallel(int ranks) {
  ParallelLayout layout;
  layout.data = ranks;
  layout.ranks_per_node = ranks;
  return layout;
}

const StandInOf kItself = [](int world_rank) { return world_rank; };

void expect_timing(const ItemTiming& timing, double ready, double end) {
  EXPECT_DOUBLE_EQ(timing.ready_seconds, ready);
  EXPECT_DOUBLE_EQ(timing.end_seconds, end);
}

TEST(StepPrediction, ACollectiveWaitsForItsSlowestMember) {
  // Rank 0 computes 1 s, rank 1 3 s, then both allreduce (0.5 s): both end at 3.5 s,
  // rank 0's allreduce ready at 1 s (so 2.5 s of it is waiting for rank 1).
  std::vector<RankSchedule> schedules(2);
  schedules[0].world_rank = 0;
  schedules[0].steps = {compute_step(1), allreduce_step({0})};
  schedules[1].world_rank = 1;
  schedules[1].steps = {compute_step(3), allreduce_step({0})};
  const auto timings = simulate_step(data_parallel(2), schedules, kItself, FixedCosts(0.5, 0));
  expect_timing(timings[0][0], 0, 1);
  expect_timing(timings[0][1], 1, 3.5);
  expect_timing(timings[1][0], 0, 3);
  expect_timing(timings[1][1], 3, 3.5);
  // The accounting reads the wait as communication, as it does on a measured step.
  const StepBreakdown step = account_step(schedules[0], timings[0]);
  EXPECT_DOUBLE_EQ(step.step_seconds, 3.5);
  EXPECT_DOUBLE_EQ(step.exposed_seconds, 2.5);
}

TEST(StepPrediction, WaitsForCrossStreamsAndStreamsKeepTheirOrder) {
  // compute A [0,2]; allreduce X waits for A: [2,3]; compute B follows A on its stream:
  // [2,2.5]; compute C waits for X (and follows B): ready 3, [3,4]; allreduce Y waits for
  // nothing but follows X on the data stream: [3,4].
  std::vector<RankSchedule> schedules(2);
  for (int rank = 0; rank < 2; ++rank) {
    schedules[static_cast<std::size_t>(rank)].world_rank = rank;
    schedules[static_cast<std::size_t>(rank)].steps = {compute_step(2), allreduce_step({0}), compute_step(0.5),
                                                       compute_step(1, {1}), allreduce_step()};
  }
  const auto timings = simulate_step(data_parallel(2), schedules, kItself, FixedCosts(1, 0));
  expect_timing(timings[0][0], 0, 2);
  expect_timing(timings[0][1], 2, 3);
  expect_timing(timings[0][2], 2, 2.5);
  expect_timing(timings[0][3], 3, 4);
  expect_timing(timings[0][4], 3, 4);
}

TEST(StepPrediction, PeerRoundsMatchNeighbouringStages) {
  // Two stages. Round 0 sends activations 0 -> 1, round 1 gradients 1 -> 0; a message
  // takes 0.25 s. Stage 0: forward 1 s, send (ready 1, ends 1.25), receive gradients
  // (ready 1.25, stage 1 sends at 3.25: ends 3.5), backward 2 s: [3.5, 5.5].
  // Stage 1: receive (ready 0, ends 1.25), forward+backward 2 s [1.25, 3.25], send.
  ParallelLayout layout;
  layout.pipeline = 2;
  layout.ranks_per_node = 2;
  std::vector<RankSchedule> schedules(2);
  for (auto& schedule : schedules) {
    schedule.peer_rounds = {{GroupRole::pipeline, {{0, 1}}, 4096}, {GroupRole::pipeline, {{1, 0}}, 4096}};
  }
  schedules[0].world_rank = 0;
  schedules[0].steps = {compute_step(1), peer_step(0, {0}), peer_step(1), compute_step(2, {2})};
  schedules[1].world_rank = 1;
  schedules[1].steps = {peer_step(0), compute_step(2, {0}), peer_step(1, {1})};
  const auto timings = simulate_step(layout, schedules, kItself, FixedCosts(0, 0.25));
  expect_timing(timings[0][1], 1, 1.25);
  expect_timing(timings[0][2], 1.25, 3.5);
  expect_timing(timings[0][3], 3.5, 5.5);
  expect_timing(timings[1][0], 0, 1.25);
  expect_timing(timings[1][1], 1.25, 3.25);
  expect_timing(timings[1][2], 3.25, 3.5);
}

TEST(StepPrediction, ACollectiveAMemberNeverReachesIsAnError) {
  std::vector<RankSchedule> schedules(2);
  schedules[0].world_rank = 0;
  schedules[0].steps = {allreduce_step()};
  schedules[1].world_rank = 1;
  schedules[1].steps = {compute_step(1)};
  EXPECT_THROW(simulate_step(data_parallel(2), schedules, kItself, FixedCosts(1, 0)), UsageError);
}

void expect_shortcut_matches_every_rank(const PatternConfig& config) {
  const LinearCosts costs;
  const StepPrediction every = predict_step(config, costs, 1 << 20);
  const StepPrediction shortcut = predict_step(config, costs, 1);
  ASSERT_TRUE(every.every_rank);
  ASSERT_FALSE(shortcut.every_rank);
  ASSERT_EQ(shortcut.ranks.size(), static_cast<std::size_t>(config.layout.pipeline));
  for (const PredictedRank& stand_in : shortcut.ranks) {
    const PredictedRank& same = every.ranks[static_cast<std::size_t>(stand_in.schedule.world_rank)];
    ASSERT_EQ(stand_in.timings.size(), same.timings.size());
    for (std::size_t step = 0; step < same.timings.size(); ++step) {
      EXPECT_DOUBLE_EQ(stand_in.timings[step].ready_seconds, same.timings[step].ready_seconds) << step;
      EXPECT_DOUBLE_EQ(stand_in.timings[step].end_seconds, same.timings[step].end_seconds) << step;
    }
  }
  // Every rank of a stage ends its step when its stand-in does.
  for (const PredictedRank& rank : every.ranks) {
    const int stand_in =
        config.layout.pipeline_rank(rank.schedule.world_rank) * config.layout.tensor * config.layout.data;
    EXPECT_DOUBLE_EQ(account_step(rank.schedule, rank.timings).step_seconds,
                     account_step(every.ranks[static_cast<std::size_t>(stand_in)].schedule,
                                  every.ranks[static_cast<std::size_t>(stand_in)].timings)
                         .step_seconds);
  }
}

TEST(StepPrediction, OneRankPerStageStandsInForItsStage) {
  expect_shortcut_matches_every_rank(testing::config_of(PatternKind::ddp, testing::small_llama(4), 4));
  expect_shortcut_matches_every_rank(testing::config_of(PatternKind::zero3, testing::small_llama(4), 4));
  expect_shortcut_matches_every_rank(testing::config_of(PatternKind::tp, testing::small_llama(4), 2, 2, 2));
}

}  // namespace
}  // namespace commbench
