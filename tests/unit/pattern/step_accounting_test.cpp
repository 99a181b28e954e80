// The step accounting's definitions on hand-made timings: durations from when an item
// could start, the union of compute, exposed communication and its attribution by type.
#include "commbench/pattern/step_accounting.hpp"

#include <gtest/gtest.h>

#include "commbench/backend/local_bootstrap.hpp"
#include "commbench/core/error.hpp"
#include "commbench/pattern/pattern_measurement.hpp"

namespace commbench {
namespace {

ScheduleStep compute_step(double seconds) {
  ScheduleStep step;
  step.kind = StepKind::compute;
  step.stream = "compute";
  step.compute_seconds = seconds;
  return step;
}

ScheduleStep collective_step(Collective op, GroupRole group, std::uint64_t bytes) {
  ScheduleStep step;
  step.kind = StepKind::collective;
  step.stream = "comm";
  step.op = op;
  step.group = group;
  step.bytes = bytes;
  return step;
}

TEST(StepAccounting, WithoutComputeAllCommunicationIsExposed) {
  RankSchedule schedule;
  schedule.steps = {collective_step(Collective::allreduce, GroupRole::data, 100),
                    collective_step(Collective::allreduce, GroupRole::data, 300)};
  const std::vector<ItemTiming> timings{{0.0, 1.0}, {1.0, 3.0}};
  const StepBreakdown step = account_step(schedule, timings);
  EXPECT_DOUBLE_EQ(step.step_seconds, 3.0);
  EXPECT_DOUBLE_EQ(step.compute_seconds, 0.0);
  EXPECT_DOUBLE_EQ(step.exposed_seconds, 3.0);
  EXPECT_DOUBLE_EQ(step.communication_seconds, 3.0);
  ASSERT_EQ(step.types.size(), 1u);
  EXPECT_EQ(step.types[0].count, 2u);
  EXPECT_EQ(step.types[0].bytes, 400u);
  EXPECT_DOUBLE_EQ(step.types[0].exposed_seconds, 3.0);
  EXPECT_EQ(label_of(step.types[0].type), "allreduce/data");
}

TEST(StepAccounting, CommunicationUnderComputeIsHiddenAndTheTailIsExposed) {
  // compute [0,4]; an allreduce overlapping it [1,5]: 1 s sticks out past the compute.
  RankSchedule schedule;
  schedule.steps = {compute_step(4), collective_step(Collective::allreduce, GroupRole::world, 8)};
  const std::vector<ItemTiming> timings{{0.0, 4.0}, {1.0, 5.0}};
  const StepBreakdown step = account_step(schedule, timings);
  EXPECT_DOUBLE_EQ(step.step_seconds, 5.0);
  EXPECT_DOUBLE_EQ(step.compute_seconds, 4.0);
  EXPECT_DOUBLE_EQ(step.exposed_seconds, 1.0);
  EXPECT_DOUBLE_EQ(step.communication_busy_seconds, 4.0);
  EXPECT_DOUBLE_EQ(step.types[0].exposed_seconds, 1.0);
  EXPECT_DOUBLE_EQ(step.unattributed_exposed_seconds, 0.0);
}

TEST(StepAccounting, ExposedTimeIsSharedAmongTheTypesActiveInIt) {
  // An allgather [0,2] and a reduce-scatter [1,3] with no compute: [1,2] is shared.
  RankSchedule schedule;
  schedule.steps = {collective_step(Collective::allgather, GroupRole::data, 8),
                    collective_step(Collective::reducescatter, GroupRole::data, 8), compute_step(1)};
  schedule.steps[1].stream = "reducescatter";
  const std::vector<ItemTiming> timings{{0.0, 2.0}, {1.0, 3.0}, {3.5, 4.5}};
  const StepBreakdown step = account_step(schedule, timings);
  ASSERT_EQ(step.types.size(), 2u);
  EXPECT_DOUBLE_EQ(step.types[0].exposed_seconds, 1.5);  // allgather: [0,1] + half of [1,2]
  EXPECT_DOUBLE_EQ(step.types[1].exposed_seconds, 1.5);
  EXPECT_DOUBLE_EQ(step.unattributed_exposed_seconds, 0.5);  // [3,3.5]: nothing ran
  EXPECT_DOUBLE_EQ(step.exposed_seconds, 3.5);
  EXPECT_DOUBLE_EQ(step.communication_busy_seconds, 3.0);
}

TEST(StepAccounting, MeanAveragesEveryField) {
  RankSchedule schedule;
  schedule.steps = {collective_step(Collective::allreduce, GroupRole::data, 10)};
  const std::vector<ItemTiming> fast{{0.0, 1.0}};
  const std::vector<ItemTiming> slow{{0.0, 3.0}};
  const std::vector<StepBreakdown> steps{account_step(schedule, fast), account_step(schedule, slow)};
  const StepBreakdown mean = mean_of(steps);
  EXPECT_DOUBLE_EQ(mean.step_seconds, 2.0);
  EXPECT_DOUBLE_EQ(mean.types[0].seconds, 2.0);
  EXPECT_EQ(mean.types[0].count, 1u);
  EXPECT_DOUBLE_EQ(mean_of({}).step_seconds, 0.0);
}

// The slowest rank's breakdowns reach every rank whole: every field, every type, bit for bit.
TEST(StepAccounting, BreakdownsTravelBetweenRanksWhole) {
  StepBreakdown step;
  step.step_seconds = 0.1;
  step.compute_seconds = 1.0 / 3.0;
  step.communication_seconds = 2e-7;
  step.communication_busy_seconds = 3e-300;
  step.exposed_seconds = 0.25;
  step.unattributed_exposed_seconds = 0;
  step.types = {CommunicationTotals{{StepKind::peer, Collective::sendrecv, GroupRole::pipeline}, 7,
                                    std::uint64_t{1} << 40, 0.125, 1e-9}};
  LocalBootstrap world;
  int slowest = -1;
  const std::vector<StepBreakdown> steps = slowest_rank_steps(world, std::vector{step, step}, slowest);
  EXPECT_EQ(slowest, 0);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[1].compute_seconds, step.compute_seconds);
  EXPECT_EQ(steps[1].communication_busy_seconds, step.communication_busy_seconds);
  ASSERT_EQ(steps[1].types.size(), 1u);
  EXPECT_EQ(steps[1].types[0].type, step.types[0].type);
  EXPECT_EQ(steps[1].types[0].bytes, step.types[0].bytes);
  EXPECT_EQ(steps[1].types[0].exposed_seconds, step.types[0].exposed_seconds);
}

TEST(StepAccounting, RefusesTimingsThatDoNotMatchTheSchedule) {
  RankSchedule schedule;
  schedule.steps = {compute_step(1)};
  EXPECT_THROW(account_step(schedule, std::vector<ItemTiming>{}), UsageError);
}

}  // namespace
}  // namespace commbench
