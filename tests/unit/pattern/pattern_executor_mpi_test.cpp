// The pattern executor on the MPI host backend under mpirun (1, 2 and 4 ranks; a test
// that needs a given count skips otherwise): hand-built schedules run on sub-communicators
// with compute, and the accounting of what they measured. Margins allow for ranks and
// compute threads that outnumber two shared cores.
#include <gtest/gtest.h>

#include <algorithm>

#include "backend/mpi/mpi_test_support.hpp"
#include "commbench/core/error.hpp"
#include "commbench/pattern/pattern_executor.hpp"
#include "commbench/pattern/pattern_measurement.hpp"

namespace commbench {
namespace {

ScheduleStep collective(Collective op, GroupRole group, std::uint64_t bytes, std::string stream = "comm") {
  ScheduleStep step;
  step.kind = StepKind::collective;
  step.stream = std::move(stream);
  step.op = op;
  step.dtype = DataType::float32;
  step.group = group;
  step.bytes = bytes;
  return step;
}

ScheduleStep compute(double seconds) {
  ScheduleStep step;
  step.kind = StepKind::compute;
  step.stream = "compute";
  step.compute_seconds = seconds;
  return step;
}

ParallelLayout data_parallel(int ranks) {
  ParallelLayout layout;
  layout.data = ranks;
  layout.ranks_per_node = ranks;
  return layout;
}

const CommunicationTotals* find_type(const StepBreakdown& step, Collective op, GroupRole group) {
  for (const CommunicationTotals& totals : step.types)
    if (totals.type.op == op && totals.type.group == group) return &totals;
  return nullptr;
}

TEST(PatternExecutor, WithoutComputeAllCommunicationIsExposed) {
  auto world = world_backend();
  RankSchedule schedule;
  for (int bucket = 0; bucket < 4; ++bucket)
    schedule.steps.push_back(collective(Collective::allreduce, GroupRole::data, 256 << 10));
  schedule.steps.push_back(collective(Collective::allgather, GroupRole::world, 64 << 10, "allgather"));
  PatternGroups groups(*world, data_parallel(world->ranks()), schedule);
  PatternStepWorkload workload(groups, schedule, "four buckets");
  const PatternMeasurement measured = measure_pattern(workload, world->group(), 5, 1, nullptr);

  EXPECT_EQ(measured.loop.iterations, 5u);
  EXPECT_EQ(workload.steps().size(), 7u) << "one warm-up, one calibration, five timed";
  const StepBreakdown& step = measured.step;
  EXPECT_GT(step.step_seconds, 0.0);
  EXPECT_DOUBLE_EQ(step.compute_seconds, 0.0);
  EXPECT_NEAR(step.exposed_seconds, step.step_seconds, 1e-12);
  const CommunicationTotals* allreduce = find_type(step, Collective::allreduce, GroupRole::data);
  ASSERT_NE(allreduce, nullptr);
  EXPECT_EQ(allreduce->count, 4u);
  EXPECT_EQ(allreduce->bytes, 4u * (256u << 10));
  ASSERT_NE(find_type(step, Collective::allgather, GroupRole::world), nullptr);
  // The step is the loop's wall time less the enqueueing that precedes its origin.
  EXPECT_LE(step.step_seconds, measured.loop.slowest_seconds * 1.5 + 1e-3);
}

// Compute on its own stream beside communication: each is accounted apart, the compute at
// least as long as asked.
TEST(PatternExecutor, ComputeBesideCommunicationIsAccountedApart) {
  auto world = world_backend();
  RankSchedule schedule;
  schedule.steps.push_back(compute(0.02));
  for (int bucket = 0; bucket < 2; ++bucket)
    schedule.steps.push_back(collective(Collective::allreduce, GroupRole::data, 64 << 10));
  PatternGroups groups(*world, data_parallel(world->ranks()), schedule);
  PatternStepWorkload workload(groups, schedule, "compute beside communication");
  const StepBreakdown step = measure_pattern(workload, world->group(), 3, 1, nullptr).step;
  EXPECT_GE(step.compute_seconds, 0.02 * 0.99);
  EXPECT_GT(step.communication_seconds, 0.0);
  const CommunicationTotals* allreduce = find_type(step, Collective::allreduce, GroupRole::data);
  ASSERT_NE(allreduce, nullptr);
  EXPECT_EQ(allreduce->count, 2u);
}

// tp x pp x dp = 2 x 2 x 1: a tensor-parallel allreduce, the pipeline's neighbour exchange
// and a data-parallel allreduce, each on its own sub-communicator.
TEST(PatternExecutor, TensorPipelineAndDataGroupsRunOnSubCommunicators) {
  auto world = world_backend();
  if (world->ranks() != 4) GTEST_SKIP() << "needs 4 ranks";
  ParallelLayout layout;
  layout.tensor = 2;
  layout.pipeline = 2;
  layout.data = 1;
  layout.ranks_per_node = 4;
  RankSchedule schedule;
  schedule.world_rank = world->group().rank();
  schedule.peer_rounds.push_back(PlannedPeerRound{GroupRole::pipeline, {{0, 1}, {1, 0}}, 32 << 10});
  schedule.steps.push_back(compute(0.002));
  schedule.steps.push_back(collective(Collective::allreduce, GroupRole::tensor, 64 << 10));
  schedule.steps.back().waits_for = {0};
  ScheduleStep exchange;
  exchange.kind = StepKind::peer;
  exchange.stream = "p2p";
  exchange.group = GroupRole::pipeline;
  exchange.bytes = 32 << 10;
  exchange.peer_round = 0;
  exchange.waits_for = {1};
  schedule.steps.push_back(exchange);
  schedule.steps.push_back(collective(Collective::allreduce, GroupRole::data, 16 << 10));
  schedule.steps.back().waits_for = {2};

  PatternGroups groups(*world, layout, schedule);
  EXPECT_EQ(groups.backend(GroupRole::tensor).ranks(), 2);
  EXPECT_EQ(groups.backend(GroupRole::pipeline).ranks(), 2);
  EXPECT_EQ(groups.backend(GroupRole::data).ranks(), 1);
  EXPECT_FALSE(groups.has(GroupRole::expert));
  PatternStepWorkload workload(groups, schedule, "tp2 pp2");
  const StepBreakdown step = measure_pattern(workload, world->group(), 3, 1, nullptr).step;
  const CommunicationTotals* tensor = find_type(step, Collective::allreduce, GroupRole::tensor);
  const CommunicationTotals* pipeline = find_type(step, Collective::sendrecv, GroupRole::pipeline);
  ASSERT_NE(tensor, nullptr);
  ASSERT_NE(pipeline, nullptr);
  EXPECT_EQ(pipeline->type.kind, StepKind::peer);
  EXPECT_EQ(pipeline->count, 1u);
  EXPECT_EQ(pipeline->bytes, 32u << 10);
  // Chained by waits: compute, then the tensor allreduce, the exchange, the data allreduce.
  const std::vector<ItemTiming>& timings = workload.last_timings();
  for (std::size_t i = 1; i < timings.size(); ++i)
    EXPECT_GE(timings[i].ready_seconds, timings[i - 1].end_seconds) << "step " << i;
  EXPECT_GE(timings[0].end_seconds, 0.002 * 0.9);
}

TEST(PatternExecutor, AnAllreduceThatWaitsForComputeStartsAfterIt) {
  auto world = world_backend();
  constexpr double kCompute = 0.05;
  RankSchedule schedule;
  schedule.steps = {compute(kCompute), collective(Collective::allreduce, GroupRole::world, 4096)};
  schedule.steps[1].waits_for = {0};
  PatternGroups groups(*world, data_parallel(world->ranks()), schedule);
  PatternStepWorkload workload(groups, schedule, "waits");
  workload.prepare();
  workload.time(1);
  const std::vector<ItemTiming>& timings = workload.last_timings();
  EXPECT_GE(timings[1].ready_seconds, timings[0].end_seconds);
  EXPECT_GE(timings[1].end_seconds, kCompute * 0.99) << "the allreduce ended after the compute";
  workload.release();
}

// The control of the test above, a judgement of speed (ctest label speed, run alone):
// without the wait the small allreduce ends long before 50 ms of compute.
TEST(PatternExecutorTiming, WithoutTheWaitASmallAllreduceEndsBeforeTheCompute) {
  auto world = world_backend();
  RankSchedule schedule;
  schedule.steps = {compute(0.05), collective(Collective::allreduce, GroupRole::world, 4096)};
  PatternGroups groups(*world, data_parallel(world->ranks()), schedule);
  PatternStepWorkload control(groups, schedule, "no wait");
  control.prepare();
  control.time(1);
  EXPECT_LT(control.last_timings()[1].end_seconds, control.last_timings()[0].end_seconds);
  control.release();
}

TEST(PatternExecutor, RefusesAWaitOnALaterStep) {
  RankSchedule schedule;
  schedule.steps = {compute(0.001), compute(0.001)};
  schedule.steps[0].waits_for = {1};
  auto world = world_backend();
  PatternGroups groups(*world, data_parallel(world->ranks()), schedule);
  EXPECT_THROW(PatternStepWorkload(groups, schedule, "bad"), UsageError);
}

// Long compute on its own stream, communication beside it: hardly any of it is exposed.
// A judgement of speed (ctest label speed, run alone).
// Best of three trials, since a busy neighbour only ever adds time.
TEST(PatternExecutorTiming, ComputeFarLongerThanCommunicationHidesIt) {
  auto world = world_backend();
  if (world->ranks() != 2) GTEST_SKIP() << "needs 2 ranks";
  RankSchedule communication_only;
  for (int bucket = 0; bucket < 8; ++bucket)
    communication_only.steps.push_back(collective(Collective::allreduce, GroupRole::data, 1 << 20));
  PatternGroups groups(*world, data_parallel(2), communication_only);
  double alone = 0;
  {
    PatternStepWorkload workload(groups, communication_only, "communication alone");
    alone = measure_pattern(workload, world->group(), 3, 1, nullptr).step.step_seconds;
  }
  RankSchedule overlapped = communication_only;
  overlapped.steps.insert(overlapped.steps.begin(), compute(std::max(0.3, 10 * alone)));

  double best_ratio = 1e9;
  for (int trial = 0; trial < 3 && best_ratio >= 0.1; ++trial) {
    PatternStepWorkload workload(groups, overlapped, "communication under compute");
    const StepBreakdown step = measure_pattern(workload, world->group(), 3, 1, nullptr).step;
    ASSERT_GT(step.communication_seconds, 0.0);
    best_ratio = std::min(best_ratio, step.exposed_seconds / step.communication_seconds);
    EXPECT_GE(step.compute_seconds, 0.3 * 0.99);
  }
  EXPECT_LT(best_ratio, 0.1) << "exposed communication over total communication";
}

}  // namespace
}  // namespace commbench
