// Pipeline (Megatron's 1F1B and interleaved orders), tensor parallel and expert parallel
// schedules, and the rule every schedule keeps: the members of a group issue the same
// collectives in the same order.
#include <map>
#include <tuple>

#include <gtest/gtest.h>

#include "commbench/pattern/pipeline_order.hpp"
#include "schedule_test_support.hpp"
#include "usage_error.hpp"

namespace commbench {
namespace {

using testing::count;
using testing::is_op;

std::string order_text(const std::vector<PipelineSlot>& order) {
  std::string text;
  for (const PipelineSlot& slot : order)
    text += (text.empty() ? "" : " ") + std::string(slot.forward ? "F" : "B") + std::to_string(slot.micro_batch);
  return text;
}

TEST(PatternPipeline, OneFOneBOrderForFourStagesEightMicroBatches) {
  EXPECT_EQ(order_text(one_f_one_b_order(4, 0, 8)), "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7");
  EXPECT_EQ(order_text(one_f_one_b_order(4, 1, 8)), "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 B6 B7");
  EXPECT_EQ(order_text(one_f_one_b_order(4, 3, 8)), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7");
}

TEST(PatternPipeline, BubbleOfOneFOneB) {
  EXPECT_DOUBLE_EQ(ideal_pipeline_bubble(4, 8), 3.0 / 11.0);
  EXPECT_DOUBLE_EQ(ideal_pipeline_bubble(4, 8, 2), 3.0 / 19.0);
  // With every forward and backward one tick, the step takes 2 (M + P - 1) ticks and each
  // stage is busy for 2 M of them: idle (P - 1) / (M + P - 1).
  const PipelinePlan plan = plan_pipeline(4, 8, 1);
  EXPECT_EQ(plan.ticks, 22);
  EXPECT_DOUBLE_EQ(static_cast<double>(plan.ticks - 16) / plan.ticks, ideal_pipeline_bubble(4, 8));
}

TEST(PatternPipeline, InterleavedOrderFollowsMegatron) {
  // P = 2, two chunks, M = 4: warm-up (P - s - 1) x 2 + (v - 1) x P forwards.
  const std::vector<PipelineSlot> stage0 = interleaved_order(2, 0, 4, 2);
  ASSERT_EQ(stage0.size(), 16u);
  EXPECT_EQ(stage0[0], (PipelineSlot{true, 0, 0}));
  EXPECT_EQ(stage0[1], (PipelineSlot{true, 1, 0}));
  EXPECT_EQ(stage0[2], (PipelineSlot{true, 0, 1}));
  EXPECT_EQ(stage0[3], (PipelineSlot{true, 1, 1}));
  EXPECT_EQ(stage0[4], (PipelineSlot{true, 2, 0}));
  EXPECT_EQ(stage0[5], (PipelineSlot{false, 0, 1}));  // backward starts from the last chunk
  const PipelinePlan plan = plan_pipeline(2, 4, 2);
  EXPECT_FALSE(plan.rounds.empty());
}

TEST(PatternPipeline, StagesExchangeActivationsAndGradientsWithNeighbours) {
  PatternConfig config = testing::config_of(PatternKind::pipeline, testing::small_llama(8), 1, 1, 4);
  config.pipeline.micro_batches = 8;
  const std::uint64_t activations = 1u * 128u * 1024u * 2u;  // micro-batch x sequence x hidden x bf16
  std::vector<RankSchedule> stages;
  for (int rank = 0; rank < 4; ++rank) stages.push_back(build_schedule(config, rank));
  for (const RankSchedule& stage : stages) {
    ASSERT_EQ(stage.peer_rounds.size(), stages[0].peer_rounds.size());
    for (std::size_t round = 0; round < stage.peer_rounds.size(); ++round)
      EXPECT_EQ(stage.peer_rounds[round].transfers, stages[0].peer_rounds[round].transfers);
    std::size_t previous_round = 0;
    bool first = true;
    for (const ScheduleStep& step : stage.steps) {
      if (step.kind != StepKind::peer) continue;
      EXPECT_EQ(step.bytes, activations);
      EXPECT_EQ(step.group, GroupRole::pipeline);
      if (!first) EXPECT_GT(step.peer_round, previous_round);  // every stage runs rounds in one order
      previous_round = step.peer_round;
      first = false;
    }
  }
  // Each round's transfers are between neighbours, and each rank taking part runs it.
  std::size_t activation_messages = 0;
  for (std::size_t round = 0; round < stages[0].peer_rounds.size(); ++round) {
    for (const auto& [source, destination] : stages[0].peer_rounds[round].transfers) {
      EXPECT_EQ(std::abs(source - destination), 1);
      activation_messages += destination > source ? 1 : 0;
      for (const int rank : {source, destination})
        EXPECT_EQ(
            count(stages[static_cast<std::size_t>(rank)],
                  [&](const ScheduleStep& step) { return step.kind == StepKind::peer && step.peer_round == round; }),
            1u);
    }
  }
  EXPECT_EQ(activation_messages, 3u * 8u);  // 8 micro-batches over 3 stage boundaries
  // Stage 0 holds layers 0 and 1 and the embedding; 8 forwards and 8 backwards of each.
  EXPECT_EQ(
      count(stages[0], [](const ScheduleStep& step) { return step.kind == StepKind::compute && step.layer == 1; }),
      16u);
}

TEST(PatternPipeline, ComputeWaitsForTheActivationsItReceives) {
  PatternConfig config = testing::config_of(PatternKind::pipeline, testing::small_llama(4), 1, 1, 2);
  const RankSchedule last = build_schedule(config, 1);
  for (const ScheduleStep& step : last.steps) {
    if (step.kind != StepKind::compute || step.phase != StepPhase::forward || step.layer != 2) continue;
    bool waits_for_peer = false;
    for (const std::size_t index : step.waits_for) waits_for_peer |= last.steps[index].kind == StepKind::peer;
    EXPECT_TRUE(waits_for_peer) << step.label << " mb " << step.micro_batch;
  }
}

TEST(PatternTensorParallel, FourAllreducesPerLayerPerMicroBatch) {
  PatternConfig config = testing::config_of(PatternKind::tp, testing::small_llama(4), 1, 2);
  config.model.gradient_accumulation = 3;
  const RankSchedule schedule = build_schedule(config, 1);
  const auto tensor_allreduce = [](const ScheduleStep& step) {
    return is_op(step, Collective::allreduce) && step.group == GroupRole::tensor;
  };
  EXPECT_EQ(count(schedule, tensor_allreduce), 4u * 4u * 3u);
  for (const ScheduleStep& step : schedule.steps)
    if (tensor_allreduce(step)) EXPECT_EQ(step.bytes, 128u * 1024u * 2u);
}

TEST(PatternTensorParallel, SequenceParallelReduceScattersAndGathers) {
  PatternConfig config = testing::config_of(PatternKind::tp, testing::small_llama(4), 1, 2);
  config.tensor_parallel.sequence_parallel = true;
  const RankSchedule schedule = build_schedule(config, 0);
  EXPECT_EQ(count(schedule, [](const ScheduleStep& step) { return is_op(step, Collective::allreduce); }), 0u);
  // Per layer: forward 2 all-gathers + 2 reduce-scatters; backward the same plus the
  // input re-gathered for each weight gradient.
  EXPECT_EQ(count(schedule, [](const ScheduleStep& step) { return is_op(step, Collective::reducescatter); }), 4u * 4u);
  EXPECT_EQ(count(schedule, [](const ScheduleStep& step) { return is_op(step, Collective::allgather); }), 4u * 6u);
}

ModelShape small_moe() {
  ModelShape model = testing::small_llama(2);
  model.experts = 4;
  model.top_k = 2;
  model.ffn = 1024;
  return model;
}

TEST(PatternExpertParallel, DispatchAndCombinePerMoeLayer) {
  PatternConfig config = testing::config_of(PatternKind::ep, small_moe(), 4);
  config.layout.expert = 2;
  config.routing = PeerDistribution{PeerDistribution::Kind::zipf, 1.2};
  const RankSchedule schedule = build_schedule(config, 3);
  const auto alltoallv = [](const ScheduleStep& step) { return is_op(step, Collective::alltoallv); };
  EXPECT_EQ(count(schedule, alltoallv), 2u * 4u);  // 2 forward + 2 backward per MoE layer
  for (const ScheduleStep& step : schedule.steps) {
    if (!alltoallv(step)) continue;
    EXPECT_EQ(step.group, GroupRole::expert);
    EXPECT_EQ(step.bytes, 2u * 128u * 1024u * 2u);  // every token to top_k = 2 experts
    EXPECT_EQ(step.distribution, config.routing);
  }
  // Expert gradients reduce over the ranks holding the same experts.
  EXPECT_GT(count(schedule, [](const ScheduleStep& step) { return step.group == GroupRole::expert_data; }), 0u);
}

TEST(PatternComposition, GroupMembersIssueTheSameCollectivesInTheSameOrder) {
  std::vector<PatternConfig> configs;
  configs.push_back(testing::config_of(PatternKind::ddp, testing::small_llama(4), 2, 2, 2));
  configs.push_back(testing::config_of(PatternKind::zero1, testing::small_llama(4), 2, 2, 2));
  configs.back().tensor_parallel.sequence_parallel = true;
  configs.push_back(testing::config_of(PatternKind::zero3, testing::small_llama(4), 4));
  configs.back().layout.ranks_per_node = 2;
  configs.back().zero.zero_hpz_partition_size = 2;
  configs.push_back(testing::config_of(PatternKind::fsdp, testing::small_llama(4), 4, 2));
  configs.back().layout.ranks_per_node = 4;
  configs.back().fsdp.sharding = FsdpSharding::hybrid_shard;
  configs.push_back(testing::config_of(PatternKind::zero2, small_moe(), 4));
  configs.back().layout.expert = 2;
  configs.back().routing = PeerDistribution{PeerDistribution::Kind::hot, 0.5};
  configs.push_back(testing::config_of(PatternKind::pipeline, testing::small_llama(8), 1, 2, 2));
  configs.back().pipeline.virtual_stages = 2;
  configs.back().pipeline.micro_batches = 4;
  for (const PatternConfig& config : configs) {
    const ParallelLayout& layout = config.layout;
    // Per (role, colour): the sequence of (op, bytes) each member issues.
    using Sequence = std::vector<std::tuple<Collective, std::uint64_t>>;
    std::map<std::pair<GroupRole, int>, std::map<int, Sequence>> issued;
    for (int rank = 0; rank < layout.ranks(); ++rank) {
      for (const ScheduleStep& step : build_schedule(config, rank).steps)
        if (step.kind == StepKind::collective)
          issued[{step.group, layout.colour_of(step.group, rank)}][rank].emplace_back(step.op, step.bytes);
    }
    for (const auto& [group, by_rank] : issued) {
      const int first_member = layout.members(group.first, by_rank.begin()->first).front();
      for (const int member : layout.members(group.first, first_member)) {
        ASSERT_TRUE(by_rank.count(member)) << name_of(config.kind) << " " << name_of(group.first) << " rank " << member;
        EXPECT_EQ(by_rank.at(member), by_rank.begin()->second)
            << name_of(config.kind) << " " << name_of(group.first) << " rank " << member;
      }
    }
  }
}

TEST(PatternComposition, ImpossibleLayoutsNameTheFlag) {
  PatternConfig config = testing::config_of(PatternKind::pipeline, testing::small_llama(2), 1, 1, 4);
  EXPECT_EQ(testing::usage_error_of([&] { build_schedule(config, 0); }),
            "--pp 4: more pipeline stages than the model's 2 layers");
  config = testing::config_of(PatternKind::zero3, testing::small_llama(4), 2, 1, 2);
  EXPECT_EQ(testing::usage_error_of([&] { build_schedule(config, 0); }),
            "--pp 2: DeepSpeed's pipeline engine runs ZeRO stage 0 or 1 only, not --pattern zero3");
  config = testing::config_of(PatternKind::ep, small_moe(), 4);
  config.layout.expert = 4;
  config.model.experts = 6;
  EXPECT_EQ(testing::usage_error_of([&] { build_schedule(config, 0); }), "--ep 4: must divide --experts 6");
  config = testing::config_of(PatternKind::pipeline, testing::small_llama(8), 1, 1, 2);
  config.pipeline.virtual_stages = 2;
  config.pipeline.micro_batches = 3;
  EXPECT_EQ(testing::usage_error_of([&] { build_schedule(config, 0); }),
            "--micro-batches 3: must be a multiple of --pp 2 with --interleave");
}

}  // namespace
}  // namespace commbench
