#include "commbench/pattern/rank_memory.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "commbench/core/dtype.hpp"
#include "commbench/pattern/model_tensors.hpp"

namespace commbench {
namespace {

// Per element of model state: the fp32 copy the optimizer updates (half-precision models
// only: an fp32 model's parameters are that copy), and Adam's exp_avg and exp_avg_sq in fp32.
constexpr std::uint64_t kMasterBytes = 4;
constexpr std::uint64_t kAdamBytes = 8;

MemoryPart optimizer_states(std::uint64_t element_bytes, std::uint64_t elements, bool partitioned) {
  const bool copy = element_bytes < kMasterBytes;
  return {fmt::format("optimizer {} ({}Adam)", partitioned ? "state partitions" : "states", copy ? "fp32 copy and " : ""),
          ((copy ? kMasterBytes : 0) + kAdamBytes) * elements};
}

// What the rank's tensors come to, whole and partitioned over `shards` ranks.
struct RankElements {
  std::uint64_t whole = 0;
  std::uint64_t partition = 0;  // ZeRO's ceil(numel / shards) per tensor, FSDP's padded shard
};

RankElements rank_elements(const std::vector<ParameterTensor>& tensors, int shards, bool by_rows) {
  RankElements elements;
  const auto ranks = static_cast<std::uint64_t>(std::max(1, shards));
  for (const ParameterTensor& tensor : tensors) {
    elements.whole += tensor.elements;
    elements.partition +=
        (by_rows ? row_padded_elements(tensor, ranks) : flat_padded_elements(tensor.elements, ranks)) / ranks;
  }
  return elements;
}

// Both ZeRO-1/2 and DDP keep every parameter whole in the half type; DDP's reducer copies
// every gradient into its flat buckets (gradient_as_bucket_view=False, its default), so the
// bucket size moves the same bytes however they are cut.
RankMemory ddp_memory(const std::vector<ParameterTensor>& tensors, std::uint64_t element_bytes) {
  const RankElements elements = rank_elements(tensors, 1, false);
  return {0,
          {{"parameters", element_bytes * elements.whole},
           {"gradients", element_bytes * elements.whole},
           {"gradient buckets", element_bytes * elements.whole},
           optimizer_states(element_bytes, elements.whole, false)}};
}

// ZeRO-1 partitions the optimizer; ZeRO-2 the gradients too. With contiguous_gradients each
// backward allocates its IPG buffer of reduce_bucket_size elements, whole whatever the
// model's size, and a second with overlap_comm (one filling while the other is reduced:
// stage_1_and_2.py's backward()).
RankMemory zero12_memory(const PatternConfig& config, const std::vector<ParameterTensor>& tensors, int data_ranks,
                         std::uint64_t element_bytes) {
  const ZeroSettings& zero = config.zero;
  const RankElements elements = rank_elements(tensors, data_ranks, false);
  const bool stage2 = config.zero_stage() == 2;
  RankMemory memory{0,
                    {{"parameters", element_bytes * elements.whole},
                     {stage2 ? "gradient partitions" : "gradients",
                      element_bytes * (stage2 ? elements.partition : elements.whole)},
                     optimizer_states(element_bytes, elements.partition, true)}};
  const std::uint64_t buckets = zero.contiguous_gradients ? (zero.overlaps(config.zero_stage()) ? 2 : 1) : 0;
  memory.parts.push_back({"reduce buckets", buckets * element_bytes * zero.reduce_bucket_size});
  return memory;
}

// ZeRO-3 (stage3.py, partition_parameters.py): every parameter partitioned, those at most
// stage3_param_persistence_threshold elements also held whole; what the coordinator holds
// gathered at once (the schedule's peak); the gradient partitions' flat buffer (in the
// model's type unless grad_accum_dtype says otherwise); the IPG bucket, a buffer of
// reduce_bucket_size elements allocated whole with contiguous_gradients (one only:
// overlap_comm picks a stream, not a second buffer), else the bucket's gradients
// themselves; and at the optimizer step the fp32 gradient of one sub-group of
// sub_group_size elements, freed before the next.
RankMemory zero3_memory(const PatternConfig& config, const std::vector<ParameterTensor>& tensors, int data_ranks,
                        std::uint64_t element_bytes, std::uint64_t gathered_peak_bytes) {
  const ZeroSettings& zero = config.zero;
  const RankElements elements = rank_elements(tensors, data_ranks, false);
  std::uint64_t persisted = 0;
  for (const ParameterTensor& tensor : tensors)
    if (tensor.elements <= zero.stage3_param_persistence_threshold &&
        persisted + tensor.elements <= zero.stage3_model_persistence_threshold)
      persisted += tensor.elements;
  const std::uint64_t bucket = zero.contiguous_gradients
                                   ? zero.reduce_bucket_size
                                   : std::min<std::uint64_t>(zero.reduce_bucket_size, elements.whole);
  return {0,
          {{"parameter partitions", element_bytes * elements.partition},
           {"persistent parameters (whole)", element_bytes * persisted},
           {"gathered parameters (peak)", gathered_peak_bytes},
           {"gradient partitions", element_bytes * elements.partition},
           {"reduce bucket", element_bytes * bucket},
           optimizer_states(element_bytes, elements.partition, true),
           {"optimizer sub-group gradient (fp32)",
            kMasterBytes * std::min<std::uint64_t>(zero.sub_group_size, elements.partition)}}};
}

// FSDP keeps each parameter's shard with its gradient and optimizer state (16 bytes per
// sharded element in mixed precision) and holds the units it has gathered: the wrapping
// unit, the prefetch flags and limit_all_gathers decide how many at once (the schedule's
// peak). NO_SHARD keeps everything whole, as DDP does.
RankMemory fsdp_memory(const PatternConfig& config, const std::vector<ParameterTensor>& tensors, int shard_ranks,
                       std::uint64_t element_bytes, std::uint64_t gathered_peak_bytes) {
  const bool sharded = config.fsdp.sharding != FsdpSharding::no_shard;
  const RankElements elements = rank_elements(tensors, sharded ? shard_ranks : 1, config.fsdp.version == 2);
  const std::uint64_t held = sharded ? elements.partition : elements.whole;
  return {0,
          {{sharded ? "parameter shards" : "parameters", element_bytes * held},
           {sharded ? "gradient shards" : "gradients", element_bytes * held},
           optimizer_states(element_bytes, held, false),
           {"gathered parameters (peak)", gathered_peak_bytes}}};
}

}  // namespace

std::uint64_t RankMemory::total() const {
  std::uint64_t sum = 0;
  for (const MemoryPart& part : parts) sum += part.bytes;
  return sum;
}

RankMemory rank_memory(const PatternConfig& config, int world_rank) {
  const std::vector<ParameterTensor> tensors =
      rank_tensors(config.model, config.layout, world_rank, config.pipeline.virtual_stages);
  const std::uint64_t element_bytes = size_of(config.model.dtype);
  const int data_ranks = config.layout.group_size(GroupRole::data, world_rank);
  RankMemory memory;
  switch (config.data_parallel_kind()) {
    case PatternKind::zero1:
    case PatternKind::zero2: memory = zero12_memory(config, tensors, data_ranks, element_bytes); break;
    case PatternKind::zero3:
      memory = zero3_memory(config, tensors, data_ranks, element_bytes,
                            build_schedule(config, world_rank).gathered_peak_bytes);
      break;
    case PatternKind::fsdp: {
      const GroupRole shard_group =
          config.fsdp.sharding == FsdpSharding::hybrid_shard ? GroupRole::intra_node : GroupRole::data;
      memory = fsdp_memory(config, tensors, config.layout.group_size(shard_group, world_rank), element_bytes,
                           build_schedule(config, world_rank).gathered_peak_bytes);
      break;
    }
    default: memory = ddp_memory(tensors, element_bytes); break;
  }
  memory.world_rank = world_rank;
  return memory;
}

RankMemory largest_rank_memory(const PatternConfig& config) {
  const ParallelLayout& layout = config.layout;
  RankMemory largest;
  bool first = true;
  for (int rank = 0; rank < layout.ranks(); ++rank) {
    if (layout.data_rank(rank) != 0) continue;
    RankMemory memory = rank_memory(config, rank);
    if (first || memory.total() > largest.total()) largest = std::move(memory);
    first = false;
  }
  return largest;
}

}  // namespace commbench
