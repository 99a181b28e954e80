#include <gtest/gtest.h>

#include "commbench/pattern/pattern_config.hpp"
#include "schedule_test_support.hpp"

namespace commbench {
namespace {

using testing::config_of;
using testing::count;
using testing::is_op;
using testing::total_bytes;

// 1e9 bf16 parameters in 1000 layers of one 1e6-element tensor (2e6 bytes) each.
PatternConfig billion_parameter_ddp() {
  ModelShape model;
  model.parameters = 1e9;
  model.layers = 1000;
  model.sequence = 1024;
  return config_of(PatternKind::ddp, model, 4);
}

const auto is_allreduce = [](const ScheduleStep& step) { return is_op(step, Collective::allreduce); };

TEST(PatternDdp, BillionBf16ParametersAllreduceTwoBillionBytes) {
  const RankSchedule schedule = build_schedule(billion_parameter_ddp(), 0);
  EXPECT_EQ(total_bytes(schedule, is_allreduce), 2'000'000'000u);
}

TEST(PatternDdp, BucketCountFollowsTheFirstAndLaterCaps) {
  // First bucket: one 2e6-byte gradient already reaches 1 MiB. Later buckets close at
  // 25 MiB = 26,214,400 bytes: 13 gradients make 26e6 (under), 14 make 28e6. The other
  // 999 gradients fill 71 buckets of 14 and one of 5: 1 + 72 = 73 buckets.
  const RankSchedule schedule = build_schedule(billion_parameter_ddp(), 0);
  ASSERT_EQ(count(schedule, is_allreduce), 73u);
  std::vector<std::uint64_t> sizes;
  for (const ScheduleStep& step : schedule.steps)
    if (is_allreduce(step)) sizes.push_back(step.bytes);
  EXPECT_EQ(sizes.front(), 2'000'000u);
  EXPECT_EQ(sizes[1], 28'000'000u);
  EXPECT_EQ(sizes.back(), 10'000'000u);
}

TEST(PatternDdp, EachBucketWaitsForTheBackwardThatCompletesIt) {
  const RankSchedule schedule = build_schedule(billion_parameter_ddp(), 0);
  std::vector<int> completing_layers;
  for (const ScheduleStep& step : schedule.steps) {
    if (!is_allreduce(step)) continue;
    ASSERT_EQ(step.waits_for.size(), 1u);
    const ScheduleStep& compute = schedule.steps[step.waits_for[0]];
    EXPECT_EQ(compute.kind, StepKind::compute);
    EXPECT_EQ(compute.phase, StepPhase::backward);
    EXPECT_EQ(step.stream, "data");
    completing_layers.push_back(compute.layer);
  }
  // Reverse parameter order: the last layer's gradient first; bucket 1 holds layers
  // 998..985, so layer 985's backward completes it.
  EXPECT_EQ(completing_layers[0], 999);
  EXPECT_EQ(completing_layers[1], 985);
  EXPECT_EQ(completing_layers.back(), 0);
}

TEST(PatternDdp, BucketCapChangesTheBucketCount) {
  PatternConfig config = billion_parameter_ddp();
  config.ddp.bucket_cap_mb = 100;  // 104,857,600 bytes: 53 gradients per bucket (106e6)
  const RankSchedule schedule = build_schedule(config, 0);
  // 1 + ceil(999 / 53) = 1 + 19
  EXPECT_EQ(count(schedule, is_allreduce), 20u);
  EXPECT_EQ(total_bytes(schedule, is_allreduce), 2'000'000'000u);
}

TEST(PatternDdp, AGivenBucketCapCapsTheFirstBucketToo) {
  // DDP(bucket_cap_mb=100): the first bucket closes at 100 MiB as the others do, so the
  // 1000 gradients fill 18 buckets of 53 and one of 46: 19 buckets, not 1 + 19.
  PatternConfig config = billion_parameter_ddp();
  config.ddp.bucket_cap_mb = 100;
  config.ddp.bucket_cap_given = true;
  EXPECT_DOUBLE_EQ(first_bucket_cap_mb(config.ddp), 100);
  const RankSchedule schedule = build_schedule(config, 0);
  std::vector<std::uint64_t> sizes;
  for (const ScheduleStep& step : schedule.steps)
    if (is_allreduce(step)) sizes.push_back(step.bytes);
  ASSERT_EQ(sizes.size(), 19u);
  EXPECT_EQ(sizes.front(), 106'000'000u);
  EXPECT_EQ(sizes.back(), 92'000'000u);
  // A first cap of its own (--first-bucket-mb) still wins.
  config.ddp.first_bucket_mb = 1;
  EXPECT_EQ(count(build_schedule(config, 0), is_allreduce), 20u);
}

TEST(PatternDdp, GradientAccumulationReducesOnlyInTheLastMicroBatch) {
  PatternConfig config = billion_parameter_ddp();
  config.model.gradient_accumulation = 4;
  const RankSchedule schedule = build_schedule(config, 0);
  EXPECT_EQ(total_bytes(schedule, is_allreduce), 2'000'000'000u);
  for (const ScheduleStep& step : schedule.steps)
    if (is_allreduce(step)) EXPECT_EQ(step.micro_batch, 3);
  EXPECT_EQ(count(schedule, [](const ScheduleStep& step) { return step.kind == StepKind::compute; }),
            4u * 2u * 1000u + 1u);
}

TEST(PatternDdp, BuffersAreBroadcastBeforeTheFirstForwardOfTheStep) {
  PatternConfig config = config_of(PatternKind::ddp, testing::small_llama(2), 2);
  config.model.gradient_accumulation = 2;
  const RankSchedule schedule = build_schedule(config, 1);
  // inv_freq: head_dim / 2 = 64 float32 values. The second micro-batch's forward follows
  // one under no_sync, which leaves require_forward_param_sync off: no broadcast there.
  EXPECT_EQ(count(schedule, [](const ScheduleStep& step) { return is_op(step, Collective::broadcast); }), 1u);
  EXPECT_EQ(schedule.steps.front().micro_batch, 0);
  EXPECT_EQ(schedule.steps.front().bytes, 256u);
  config.ddp.broadcast_buffers = false;
  EXPECT_EQ(
      count(build_schedule(config, 1), [](const ScheduleStep& step) { return is_op(step, Collective::broadcast); }),
      0u);
}

TEST(PatternDdp, OptimizerWaitsForEveryAllreduce) {
  const RankSchedule schedule = build_schedule(billion_parameter_ddp(), 0);
  const ScheduleStep& optimizer = schedule.steps.back();
  EXPECT_EQ(optimizer.phase, StepPhase::optimizer);
  EXPECT_EQ(optimizer.waits_for.size(), 73u);
}

}  // namespace
}  // namespace commbench
