// ZeRO-1/2/3 and FSDP schedules against figures computed by hand for testing::small_llama(4):
// per layer 4 x 1024^2 (q, k, v, o) + 3 x 1024 x 4096 (gate, up, down) + 2 x 1024 (norms)
// = 16,779,264 elements; embedding and head 1000 x 1024 each; final norm 1024. In all
// 4 x 16,779,264 + 2 x 1,024,000 + 1024 = 69,166,080 elements, 9 x 1024 of them in norms.
#include <algorithm>

#include <gtest/gtest.h>

#include "commbench/pattern/pattern_config.hpp"
#include "schedule_test_support.hpp"
#include "usage_error.hpp"

namespace commbench {
namespace {

using testing::config_of;
using testing::count;
using testing::is_op;
using testing::small_llama;
using testing::total_bytes;

constexpr std::uint64_t kElements = 69'166'080;
constexpr std::uint64_t kNormElements = 9 * 1024;
constexpr std::uint64_t kBytes = 2 * kElements;  // bf16

const auto is_allgather = [](const ScheduleStep& step) { return is_op(step, Collective::allgather); };
const auto is_reducescatter = [](const ScheduleStep& step) { return is_op(step, Collective::reducescatter); };
// ZeRO-3's gathers for the forward and backward compute, not those after the optimizer.
const auto is_fetch = [](const ScheduleStep& step) {
  return is_op(step, Collective::allgather) && step.phase != StepPhase::optimizer;
};

// Every module released after it runs and nothing prefetched: each parameter above the
// persistence threshold is gathered exactly once in forward and once in backward.
PatternConfig zero3() {
  PatternConfig config = config_of(PatternKind::zero3, small_llama(4), 4);
  config.zero.stage3_max_reuse_distance = 0;
  config.zero.stage3_prefetch_bucket_size = 0;
  return config;
}

TEST(PatternZero3, AllGatherTwiceWhatIsNotPersistentReduceScatterEveryGradient) {
  const RankSchedule schedule = build_schedule(zero3(), 2);
  // Forward and backward each gather every parameter above the persistence threshold
  // (1e5: the norms stay resident).
  EXPECT_EQ(total_bytes(schedule, is_fetch), 2 * 2 * (kElements - kNormElements));
  EXPECT_EQ(total_bytes(schedule, is_reducescatter), kBytes);
}

TEST(PatternZero3, PersistenceThresholdKeepsSmallParametersResident) {
  PatternConfig config = zero3();
  config.zero.stage3_param_persistence_threshold = 1'048'576;  // also the embedding, head, q/k/v/o
  const std::uint64_t resident = kNormElements + 2 * 1'024'000 + 4 * 4 * 1'048'576;
  EXPECT_EQ(total_bytes(build_schedule(config, 0), is_fetch), 2 * 2 * (kElements - resident));
  config.zero.stage3_model_persistence_threshold = 0;  // nothing may stay resident
  EXPECT_EQ(total_bytes(build_schedule(config, 0), is_fetch), 2 * kBytes);
}

TEST(PatternZero3, ReuseDistanceKeepsWhatBackwardUsesSoon) {
  PatternConfig config = zero3();
  config.zero.stage3_max_reuse_distance = 1'000'000'000;  // DeepSpeed's default: the whole model
  // Nothing is released between forward and backward: every parameter is gathered once.
  EXPECT_EQ(total_bytes(build_schedule(config, 0), is_fetch), 2 * (kElements - kNormElements));
}

TEST(PatternZero3, PrefetchBucketSetsHowManyGathers) {
  PatternConfig config = zero3();
  config.zero.stage3_prefetch_bucket_size = 0;
  // One gather per leaf module with a non-resident weight, forward and backward:
  // 7 per layer, the embedding and the head.
  EXPECT_EQ(count(build_schedule(config, 0), is_fetch), 2u * (4u * 7u + 2u));
  config.zero.stage3_prefetch_bucket_size = 50'000'000;
  const RankSchedule prefetching = build_schedule(config, 0);
  EXPECT_LT(count(prefetching, is_fetch), 2u * (4u * 7u + 2u));
  // The prefetcher runs ahead into backward while the last layers are still gathered:
  // those uses are taken off the queue, so those parameters stay for backward.
  const std::uint64_t gathered = total_bytes(prefetching, is_fetch);
  EXPECT_LT(gathered, 2 * 2 * (kElements - kNormElements));
  EXPECT_GE(gathered, 2 * (kElements - kNormElements));
}

TEST(PatternZero3, PrefetchedParametersStayForTheirSkippedUse) {
  PatternConfig config = zero3();
  // A bucket larger than the model: the root module's fetch (no parameters of its own)
  // prefetches every parameter in one call and goes on taking the backward uses off the
  // queue while all of them are gathered, so none is released before backward: one
  // gather in all.
  config.zero.stage3_prefetch_bucket_size = 100'000'000;
  const RankSchedule schedule = build_schedule(config, 0);
  EXPECT_EQ(count(schedule, is_fetch), 1u);
  EXPECT_EQ(total_bytes(schedule, is_fetch), 2 * (kElements - kNormElements));
  // max_live_parameters bounds the prefetch: with room for less than the model, the
  // layers gathered early are released before their backward and gathered again.
  config.zero.stage3_max_live_parameters = 40'000'000;
  EXPECT_GT(total_bytes(build_schedule(config, 0), is_fetch), 2 * (kElements - kNormElements));
}

TEST(PatternZero3, TheStepsFirstGatherIsTheRootsPrefetchWithTheEmbedding) {
  // DeepSpeed hooks the whole model too: its fetch has nothing of its own to gather and
  // prefetches from the front of the queue, the embedding first, in one call.
  PatternConfig config = zero3();
  config.zero.stage3_prefetch_bucket_size = 50'000'000;
  const RankSchedule schedule = build_schedule(config, 0);
  const auto first = std::find_if(schedule.steps.begin(), schedule.steps.end(), is_fetch);
  ASSERT_NE(first, schedule.steps.end());
  EXPECT_EQ(first->label, "prefetch embed_tokens");
  EXPECT_GT(first->bytes, 2u * 1'024'000u);                          // the embedding and what follows it
  EXPECT_LE(first->bytes, 2u * (50'000'000u + 4u * 1024u * 4096u));  // up to the bucket, a tensor past it
}

TEST(PatternZero3, ContainersPrefetchTooAndModulesAreReleasedBeforeTheNextFetch) {
  // The tests/fixtures/traces/llama-zero3-small case by hand (fp32 on 4 ranks, prefetch
  // bucket 1e5, persistence 1000, reuse distance 0). A layer: q 65,536, k and v 32,768
  // each, o 65,536, gate, up and down 131,072 each, norms 256 (resident). The trace:
  // root, embed, rotary, then per layer the layer, input norm, attention, q, k, v, o, post
  // norm, mlp, gate, up, down, then norm and lm_head; every hook prefetches a bucket.
  //   root: embed (256,000); embed: q k v (131,072); rotary: o gate (196,608); layer 0:
  //   up; input norm: down; attention: layer 1's q k v; q: layer 1's o gate; k: up; v:
  //   down; o: lm_head (256,000). Then the queue is in backward's part: lm_head and both
  //   layers' MLPs are gathered (taken for their backward use, so kept), but layer 0's
  //   attention and the embedding were released when their modules were done. Post norm:
  //   layer 0's o v k (131,072); mlp: its q and the embedding (321,536). Backward gathers
  //   nothing more.
  ModelShape model;
  model.layers = 2;
  model.hidden = 256;
  model.ffn = 512;
  model.attention_heads = 4;
  model.kv_heads = 2;
  model.vocabulary = 1000;
  model.sequence = 32;
  model.micro_batch = 4;
  model.dtype = DataType::float32;
  PatternConfig config = config_of(PatternKind::zero3, model, 4);
  config.zero.stage3_prefetch_bucket_size = 100'000;
  config.zero.stage3_param_persistence_threshold = 1000;
  config.zero.stage3_max_reuse_distance = 0;
  config.zero.reduce_bucket_size = 200'000;
  const RankSchedule schedule = build_schedule(config, 0);
  std::vector<std::uint64_t> forward, backward;
  for (const ScheduleStep& step : schedule.steps)
    if (is_fetch(step)) (step.phase == StepPhase::forward ? forward : backward).push_back(step.bytes / 4);
  EXPECT_EQ(forward, (std::vector<std::uint64_t>{256'000, 131'072, 196'608, 131'072, 131'072, 131'072, 196'608, 131'072,
                                                 131'072, 256'000, 131'072, 321'536}));
  EXPECT_EQ(backward, std::vector<std::uint64_t>{});
}

TEST(PatternZero3, LayerComputeWaitsForItsParameters) {
  const RankSchedule schedule = build_schedule(zero3(), 0);
  for (const ScheduleStep& step : schedule.steps) {
    if (step.kind != StepKind::compute || step.layer < 0 || step.layer > 3) continue;
    bool waits_for_gather = false;
    for (const std::size_t index : step.waits_for) waits_for_gather |= is_fetch(schedule.steps[index]);
    EXPECT_TRUE(waits_for_gather) << step.label;
  }
}

TEST(PatternZero3, ReduceBucketSizeSetsTheReduceScatters) {
  PatternConfig config = zero3();
  config.zero.reduce_bucket_size = 1'024 * 1'024 * 1'024;
  EXPECT_EQ(count(build_schedule(config, 0), is_reducescatter), 1u);
  // One MLP matrix: a gradient that would overflow the bucket reduces it first. In
  // backward order each layer fills down | up | gate | post-norm, o, v, k | q, input-norm
  // (+ the next layer's down overflows): the head's bucket, 5 per layer, and the last
  // one (layer 0's q and norm with the embedding) at the end: 1 + 4 x 5 = 21.
  config.zero.reduce_bucket_size = 4'194'304;
  const RankSchedule schedule = build_schedule(config, 0);
  EXPECT_EQ(total_bytes(schedule, is_reducescatter), kBytes);
  EXPECT_EQ(count(schedule, is_reducescatter), 21u);
}

TEST(PatternZero3, OverlapCommDecidesWhetherComputeWaits) {
  PatternConfig config = zero3();
  const auto compute_waits_for_reduction = [](const RankSchedule& schedule) {
    for (const ScheduleStep& step : schedule.steps)
      for (const std::size_t index : step.waits_for)
        if (step.kind == StepKind::compute && step.phase == StepPhase::backward &&
            is_reducescatter(schedule.steps[index]))
          return true;
    return false;
  };
  config.zero.reduce_bucket_size = 4'194'304;
  EXPECT_FALSE(compute_waits_for_reduction(build_schedule(config, 0)));  // stage 3 overlaps by default
  config.zero.overlap_comm = false;
  config.zero.overlap_comm_set = true;
  EXPECT_TRUE(compute_waits_for_reduction(build_schedule(config, 0)));
}

TEST(PatternZero3, HpzGathersBackwardWithinTheNode) {
  PatternConfig config = zero3();
  config.layout.ranks_per_node = 2;
  config.zero.zero_hpz_partition_size = 2;
  const RankSchedule schedule = build_schedule(config, 0);
  for (const ScheduleStep& step : schedule.steps) {
    if (!is_fetch(step)) continue;
    EXPECT_EQ(step.group, step.phase == StepPhase::backward ? GroupRole::intra_node : GroupRole::data) << step.label;
  }
  config.zero.zero_hpz_partition_size = 4;
  EXPECT_EQ(testing::usage_error_of([&] { build_schedule(config, 0); }),
            "zero_optimization.zero_hpz_partition_size 4: must be the data-parallel ranks on a node (2)");
}

TEST(PatternZero3, AfterBackwardTheGradientNormAfterTheStepThePersistentParameters) {
  const RankSchedule schedule = build_schedule(zero3(), 1);
  std::size_t norm = 0, optimizer = 0, last_reduction = 0;
  std::vector<std::uint64_t> persistent;
  for (std::size_t i = 0; i < schedule.steps.size(); ++i) {
    const ScheduleStep& step = schedule.steps[i];
    if (is_reducescatter(step)) last_reduction = i;
    if (is_op(step, Collective::allreduce)) {
      EXPECT_EQ(norm, 0u) << "one gradient norm";
      norm = i;
      EXPECT_EQ(step.dtype, DataType::float64);
      EXPECT_EQ(step.bytes, 8u);
      EXPECT_EQ(step.group, GroupRole::data);
    }
    if (step.kind == StepKind::compute && step.phase == StepPhase::optimizer) optimizer = i;
    if (is_op(step, Collective::allgather) && step.phase == StepPhase::optimizer) {
      EXPECT_GT(i, optimizer);
      EXPECT_EQ(step.waits_for, std::vector<std::size_t>{optimizer});
      persistent.push_back(step.bytes);
    }
  }
  ASSERT_GT(norm, last_reduction);
  EXPECT_EQ(schedule.steps[optimizer].waits_for, std::vector<std::size_t>{norm});
  // The 9 norms of 1024 elements (bf16) persist: one gather each.
  EXPECT_EQ(persistent, std::vector<std::uint64_t>(9, 2 * 1024));
}

TEST(PatternZero3, PersistentPartitionsArePaddedToTheRanks) {
  // 1024 elements over 3 ranks: 342 each, 1026 gathered.
  const RankSchedule schedule = build_schedule(config_of(PatternKind::zero3, small_llama(4), 3), 0);
  std::uint64_t after_step = 0;
  for (const ScheduleStep& step : schedule.steps)
    if (is_op(step, Collective::allgather) && step.phase == StepPhase::optimizer) after_step += step.bytes;
  EXPECT_EQ(after_step, 9u * 2 * 1026);
}

// A gradient bucket as stage 1/2 reduces it: allreduced whole (the default
// use_multi_rank_bucket_allreduce), not the gradient norm's one float.
const auto is_bucket_allreduce = [](const ScheduleStep& step) {
  return is_op(step, Collective::allreduce) && step.phase != StepPhase::optimizer;
};

TEST(PatternZero12, Stage2ReducesEveryMicroBatchStage1OnlyAtTheBoundary) {
  PatternConfig config = config_of(PatternKind::zero2, small_llama(4), 4);
  config.model.gradient_accumulation = 2;
  EXPECT_EQ(total_bytes(build_schedule(config, 0), is_bucket_allreduce), 2 * kBytes);
  config.kind = PatternKind::zero1;
  const RankSchedule stage1 = build_schedule(config, 0);
  EXPECT_EQ(total_bytes(stage1, is_bucket_allreduce), kBytes);
  for (const ScheduleStep& step : stage1.steps)
    if (is_bucket_allreduce(step)) EXPECT_EQ(step.micro_batch, 1);
}

TEST(PatternZero12, BucketsAreAllreducedWholeUnlessToldToReduceToTheirOwners) {
  PatternConfig config = config_of(PatternKind::zero2, small_llama(4), 4);
  EXPECT_EQ(total_bytes(build_schedule(config, 0), is_reducescatter), 0u);
  config.zero.use_multi_rank_bucket_allreduce = false;
  EXPECT_EQ(total_bytes(build_schedule(config, 0), is_reducescatter), kBytes);
  EXPECT_EQ(total_bytes(build_schedule(config, 0), is_bucket_allreduce), 0u);
  // The optimizer's gradient norm: one float32 over the data group, after the buckets.
  const RankSchedule schedule = build_schedule(config, 0);
  std::size_t norms = 0;
  for (const ScheduleStep& step : schedule.steps)
    if (is_op(step, Collective::allreduce)) {
      ++norms;
      EXPECT_EQ(step.bytes, 4u);
      EXPECT_EQ(step.dtype, DataType::float32);
      EXPECT_EQ(step.label, "gradient norm");
    }
  EXPECT_EQ(norms, 1u);
}

TEST(PatternZero12, UpdatedPartitionsAreGatheredAfterTheOptimizer) {
  PatternConfig config = config_of(PatternKind::zero2, small_llama(4), 4);
  config.zero.allgather_bucket_size = 20'000'000;  // 69,166,080 / 2e7: 3 shards
  const RankSchedule schedule = build_schedule(config, 0);
  EXPECT_EQ(count(schedule, is_allgather), 3u);
  EXPECT_EQ(total_bytes(schedule, is_allgather), kBytes);
  for (const ScheduleStep& step : schedule.steps)
    if (is_allgather(step)) EXPECT_EQ(step.phase, StepPhase::optimizer);
  config.zero.reduce_scatter = false;
  EXPECT_EQ(total_bytes(build_schedule(config, 0), is_bucket_allreduce), kBytes);
}

TEST(PatternFsdp, FullShardGathersOnceMorePerUnitThanShardGradOp) {
  PatternConfig config = config_of(PatternKind::fsdp, small_llama(4), 2);
  const RankSchedule full = build_schedule(config, 0);
  config.fsdp.sharding = FsdpSharding::shard_grad_op;
  const RankSchedule grad_op = build_schedule(config, 0);
  // 4 wrapped blocks and the root (embedding, norm, head); the root is never resharded
  // after forward, so the difference is one all-gather per wrapped unit.
  EXPECT_EQ(count(grad_op, is_allgather), 5u);
  EXPECT_EQ(count(full, is_allgather), 5u + 4u);
  EXPECT_EQ(total_bytes(full, is_allgather) - total_bytes(grad_op, is_allgather), 4u * 2u * 16'779'264u);
  EXPECT_EQ(count(full, is_reducescatter), 5u);
  EXPECT_EQ(total_bytes(full, is_reducescatter), kBytes);
  EXPECT_EQ(total_bytes(grad_op, is_reducescatter), kBytes);
}

TEST(PatternFsdp, ThreeShardsPadEachParametersRowsOrTheFlatUnit) {
  // 1024 and 4096 rows, and the vocabulary's 1000, are none a multiple of 3.
  PatternConfig config = config_of(PatternKind::fsdp, small_llama(4), 3);
  const RankSchedule fsdp2 = build_schedule(config, 0);
  // FSDP2 pads each parameter's rows to a multiple of 3: per block q/k/v/o (+2 rows of
  // 1024 each), gate/up (+2 x 1024 each), down (+2 rows of 4096), two norms (+2 each);
  // the embedding and head +2 rows of 1024 each, the final norm +2.
  const std::uint64_t per_block = 6 * 2 * 1024 + 2 * 4096 + 2 * 2;
  EXPECT_EQ(total_bytes(fsdp2, is_reducescatter), 2 * (kElements + 4 * per_block + 2 * 2 * 1024 + 2));
  const auto first_gather = [](const RankSchedule& schedule) {
    return std::find_if(schedule.steps.begin(), schedule.steps.end(), is_allgather)->bytes;
  };
  EXPECT_EQ(first_gather(fsdp2), 2u * (2 * 1002 * 1024 + 1026));  // the root unit
  // FSDP1 pads the unit's one flat parameter: 2 x 1000 x 1024 + 1024 is a multiple of 3.
  config.fsdp.version = 1;
  const RankSchedule fsdp1 = build_schedule(config, 0);
  EXPECT_EQ(first_gather(fsdp1), 2u * (2 * 1000 * 1024 + 1024));
  EXPECT_LT(total_bytes(fsdp1, is_reducescatter), total_bytes(fsdp2, is_reducescatter));
}

TEST(PatternZero3, ThreeRanksPadEachPartitionToCeilNumelOverRanks) {
  // Every tensor of small_llama has numel = 1 (mod 3): each is padded by 2 elements.
  const RankSchedule schedule = build_schedule(config_of(PatternKind::zero3, small_llama(4), 3), 0);
  EXPECT_EQ(total_bytes(schedule, is_reducescatter), 2 * (kElements + 2 * (4 * 9 + 3)));
}

TEST(PatternFsdp, UnitSizeSetsTheGathers) {
  PatternConfig config = config_of(PatternKind::fsdp, small_llama(4), 2);
  config.fsdp.layers_per_unit = 2;
  EXPECT_EQ(count(build_schedule(config, 0), is_allgather), 3u + 2u);
  config.fsdp.layers_per_unit = 0;  // no wrapping: one root unit
  EXPECT_EQ(count(build_schedule(config, 0), is_allgather), 1u);
}

TEST(PatternFsdp, UnitsUnderAnInterleavedPipeline) {
  // Stage 0 of 2 with two chunks holds layers 0-1 and 4-5 (of 8): two units of two
  // blocks, plus the root (the embedding).
  PatternConfig config = config_of(PatternKind::fsdp, small_llama(8), 2, 1, 2);
  config.pipeline.virtual_stages = 2;
  config.pipeline.micro_batches = 2;
  config.fsdp.layers_per_unit = 2;
  config.fsdp.sharding = FsdpSharding::shard_grad_op;
  // Each micro-batch gathers the root once and each unit once per chunk forward.
  EXPECT_EQ(count(build_schedule(config, 0), is_allgather), 2u * 3u);
}

TEST(PatternFsdp, HybridShardGathersInTheNodeAndAllreducesAcross) {
  PatternConfig config = config_of(PatternKind::fsdp, small_llama(4), 4);
  config.layout.ranks_per_node = 2;
  config.fsdp.sharding = FsdpSharding::hybrid_shard;
  const RankSchedule schedule = build_schedule(config, 1);
  for (const ScheduleStep& step : schedule.steps) {
    if (is_allgather(step) || is_reducescatter(step)) EXPECT_EQ(step.group, GroupRole::intra_node);
    if (is_op(step, Collective::allreduce)) EXPECT_EQ(step.group, GroupRole::inter_node);
  }
  EXPECT_EQ(total_bytes(schedule, [](const ScheduleStep& step) { return is_op(step, Collective::allreduce); }),
            kBytes / 2);
}

// The position of the first step matching `label`.
std::size_t position_of(const RankSchedule& schedule, const std::string& label) {
  for (std::size_t index = 0; index < schedule.steps.size(); ++index)
    if (schedule.steps[index].label == label) return index;
  ADD_FAILURE() << "no step " << label;
  return 0;
}

TEST(PatternFsdp, BackwardPrefetchOrdersTheNextGather) {
  PatternConfig config = config_of(PatternKind::fsdp, small_llama(4), 2);
  const auto backward_gather_of_unit_2 = [](const RankSchedule& schedule) {
    for (std::size_t index = 0; index < schedule.steps.size(); ++index)
      if (schedule.steps[index].label == "all-gather unit of layer 2" &&
          schedule.steps[index].phase == StepPhase::backward)
        return index;
    return std::size_t{0};
  };
  const RankSchedule pre = build_schedule(config, 0);
  EXPECT_LT(backward_gather_of_unit_2(pre), position_of(pre, "layer 3 backward"));
  config.fsdp.backward_prefetch = FsdpBackwardPrefetch::backward_post;
  const RankSchedule post = build_schedule(config, 0);
  EXPECT_GT(backward_gather_of_unit_2(post), position_of(post, "layer 3 backward"));
  EXPECT_LT(backward_gather_of_unit_2(post), position_of(post, "reduce-scatter unit of layer 3"));
  config.fsdp.backward_prefetch = FsdpBackwardPrefetch::none;
  const RankSchedule none = build_schedule(config, 0);
  EXPECT_GT(backward_gather_of_unit_2(none), position_of(none, "reduce-scatter unit of layer 3"));
}

TEST(PatternFsdp, LimitAllGathersWaitsForTheFreeTwoBack) {
  PatternConfig config = config_of(PatternKind::fsdp, small_llama(4), 2);
  const RankSchedule limited = build_schedule(config, 0);
  // Forward: the root and units 0, 1 gather freely; unit 2's gather waits for unit 0's
  // forward (its reshard), unit 3's for unit 1's.
  const ScheduleStep& gather = limited.steps[position_of(limited, "all-gather unit of layer 2")];
  ASSERT_EQ(gather.waits_for.size(), 1u);
  EXPECT_EQ(limited.steps[gather.waits_for[0]].label, "layer 0 forward");
  config.fsdp.limit_all_gathers = false;
  const RankSchedule unlimited = build_schedule(config, 0);
  EXPECT_TRUE(unlimited.steps[position_of(unlimited, "all-gather unit of layer 2")].waits_for.empty());
}

}  // namespace
}  // namespace commbench
