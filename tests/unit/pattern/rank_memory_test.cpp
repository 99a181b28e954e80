// A rank's memory under each framework's settings, against figures computed by hand for
// testing::small_llama(4) on 4 data-parallel ranks: 69,166,080 elements (see
// sharded_schedule_test.cpp), every tensor a multiple of 4 elements, so a rank's partition
// is 17,291,520 of them; bf16.
#include <gtest/gtest.h>

#include <string>

#include "commbench/pattern/rank_memory.hpp"
#include "schedule_test_support.hpp"

namespace commbench {
namespace {

using testing::config_of;
using testing::small_llama;

constexpr std::uint64_t kElements = 69'166'080;
constexpr std::uint64_t kPartition = kElements / 4;
constexpr std::uint64_t kLargestModule = 1024 * 4096;  // gate, up or down
constexpr std::uint64_t kNormElements = 9 * 1024;

std::uint64_t part(const RankMemory& memory, const std::string& name) {
  for (const MemoryPart& part : memory.parts)
    if (part.name == name) return part.bytes;
  ADD_FAILURE() << "no part named " << name;
  return 0;
}

// Nothing prefetched, nothing kept for reuse, nothing persistent: one module gathered at a time.
PatternConfig zero3() {
  PatternConfig config = config_of(PatternKind::zero3, small_llama(4), 4);
  config.zero.stage3_prefetch_bucket_size = 0;
  config.zero.stage3_max_reuse_distance = 0;
  config.zero.stage3_param_persistence_threshold = 0;
  return config;
}

TEST(RankMemory, Zero3CountsPartitionsTheBucketTheSubGroupAndOneModuleGathered) {
  const RankMemory memory = rank_memory(zero3(), 1);
  EXPECT_EQ(memory.world_rank, 1);
  EXPECT_EQ(part(memory, "parameter partitions"), 2 * kPartition);
  EXPECT_EQ(part(memory, "persistent parameters (whole)"), 0u);
  EXPECT_EQ(part(memory, "gathered parameters (peak)"), 2 * kLargestModule);
  EXPECT_EQ(part(memory, "gradient partitions"), 2 * kPartition);
  EXPECT_EQ(part(memory, "reduce bucket"), 2 * 500'000'000u);  // allocated whole, larger than the model
  EXPECT_EQ(part(memory, "optimizer state partitions (fp32 copy and Adam)"), 12 * kPartition);
  EXPECT_EQ(part(memory, "optimizer sub-group gradient (fp32)"), 4 * kPartition);
  EXPECT_EQ(memory.total(), 1'354'219'008u);
}

TEST(RankMemory, Zero3KnobsMoveTheirOwnPart) {
  PatternConfig config = zero3();
  config.zero.contiguous_gradients = false;  // the bucket's gradients themselves, at most the model
  EXPECT_EQ(part(rank_memory(config, 0), "reduce bucket"), 2 * kElements);
  config.zero.reduce_bucket_size = 1;
  EXPECT_EQ(part(rank_memory(config, 0), "reduce bucket"), 2u);
  config.zero.sub_group_size = 10'000'000;
  EXPECT_EQ(part(rank_memory(config, 0), "optimizer sub-group gradient (fp32)"), 40'000'000u);
  config.zero.stage3_param_persistence_threshold = 1024;  // the norms
  EXPECT_EQ(part(rank_memory(config, 0), "persistent parameters (whole)"), 2 * kNormElements);
}

TEST(RankMemory, Zero3PersistenceAtTheLargestParameterHoldsTheWholeModelAndGathersNothing) {
  PatternConfig config = zero3();
  config.zero.stage3_param_persistence_threshold = kLargestModule;
  const RankMemory memory = rank_memory(config, 0);
  EXPECT_EQ(part(memory, "persistent parameters (whole)"), 2 * kElements);
  EXPECT_EQ(part(memory, "gathered parameters (peak)"), 0u);
}

TEST(RankMemory, Zero3PrefetchGathersMoreAtOnceAndMaxLiveParametersBoundsIt) {
  PatternConfig config = zero3();
  const std::uint64_t alone = part(rank_memory(config, 0), "gathered parameters (peak)");
  config.zero.stage3_prefetch_bucket_size = 50'000'000;
  config.zero.stage3_max_live_parameters = 1'000'000'000;
  const std::uint64_t prefetching = part(rank_memory(config, 0), "gathered parameters (peak)");
  config.zero.stage3_max_live_parameters = 10'000'000;
  const std::uint64_t bounded = part(rank_memory(config, 0), "gathered parameters (peak)");
  EXPECT_GT(prefetching, alone);
  EXPECT_LT(bounded, prefetching);
  // The live limit stops the prefetch, not a module's own fetch: at most the limit, one
  // module and the parameter that crossed it.
  EXPECT_LE(bounded, 2 * (10'000'000 + 2 * kLargestModule));
}

TEST(RankMemory, DdpHoldsEverythingWholeAndItsBucketsCopyEveryGradientWhateverTheirSize) {
  PatternConfig config = config_of(PatternKind::ddp, small_llama(4), 4);
  const RankMemory memory = rank_memory(config, 3);
  EXPECT_EQ(memory.total(), 18 * kElements);
  config.ddp.bucket_cap_mb = 1;
  config.ddp.bucket_cap_given = true;
  EXPECT_EQ(rank_memory(config, 3).total(), 18 * kElements);
}

TEST(RankMemory, Zero2PartitionsGradientsAndDoublesItsBucketWithOverlap) {
  PatternConfig config = config_of(PatternKind::zero2, small_llama(4), 4);
  config.zero.overlap_comm = true;
  config.zero.overlap_comm_set = true;
  RankMemory memory = rank_memory(config, 0);
  EXPECT_EQ(part(memory, "parameters"), 2 * kElements);
  EXPECT_EQ(part(memory, "gradient partitions"), 2 * kPartition);
  EXPECT_EQ(part(memory, "optimizer state partitions (fp32 copy and Adam)"), 12 * kPartition);
  EXPECT_EQ(part(memory, "reduce buckets"), 2 * 2 * 500'000'000u);
  config.zero.overlap_comm = false;
  EXPECT_EQ(part(rank_memory(config, 0), "reduce buckets"), 2 * 500'000'000u);
  config.kind = PatternKind::zero1;
  config.zero.contiguous_gradients = false;
  memory = rank_memory(config, 0);
  EXPECT_EQ(part(memory, "gradients"), 2 * kElements);
  EXPECT_EQ(part(memory, "reduce buckets"), 0u);
}

TEST(RankMemory, FsdpHoldsShardsAndTheUnitsItHasGathered) {
  PatternConfig config = config_of(PatternKind::fsdp, small_llama(4), 4);
  const RankMemory full = rank_memory(config, 2);
  EXPECT_EQ(part(full, "parameter shards") + part(full, "gradient shards") +
                part(full, "optimizer states (fp32 copy and Adam)"),
            16 * kPartition);
  // SHARD_GRAD_OP keeps every unit gathered from its forward until after its backward.
  config.fsdp.sharding = FsdpSharding::shard_grad_op;
  EXPECT_EQ(part(rank_memory(config, 2), "gathered parameters (peak)"), 2 * kElements);
  config.fsdp.sharding = FsdpSharding::full_shard;
  const std::uint64_t one_layer = part(full, "gathered parameters (peak)");
  EXPECT_LT(one_layer, 2 * kElements);
  config.fsdp.layers_per_unit = 2;
  EXPECT_GT(part(rank_memory(config, 2), "gathered parameters (peak)"), one_layer);
}

TEST(RankMemory, AnFp32ModelHasNoSeparateFp32Copy) {
  PatternConfig config = config_of(PatternKind::ddp, small_llama(4), 4);
  config.model.dtype = DataType::float32;
  const RankMemory memory = rank_memory(config, 0);
  EXPECT_EQ(part(memory, "optimizer states (Adam)"), 8 * kElements);
  EXPECT_EQ(memory.total(), (3 * 4 + 8) * kElements);  // parameters, gradients, buckets; Adam's moments
}

TEST(RankMemory, TheLargestRankIsCountedOncePerDataGroup) {
  PatternConfig config = config_of(PatternKind::ddp, small_llama(4), 2, 1, 2);
  const RankMemory largest = largest_rank_memory(config);
  // Stage 0 holds the embedding and two layers, stage 1 two layers, the final norm and the head:
  // they differ by the final norm alone.
  EXPECT_EQ(largest.total(), std::max(rank_memory(config, 0).total(), rank_memory(config, 2).total()));
  EXPECT_EQ(largest.world_rank, rank_memory(config, 0).total() >= rank_memory(config, 2).total() ? 0 : 2);
}

}  // namespace
}  // namespace commbench
