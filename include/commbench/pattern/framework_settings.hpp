// The settings of each framework the schedules follow, named as the framework names them
// (docs/patterns.md gives the source of every default). They live apart from
// pattern_config.hpp so the ds_config reader and the flag parser can fill them without
// the schedule code.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace commbench {

// torch.nn.parallel.DistributedDataParallel(bucket_cap_mb=None → 25, broadcast_buffers=True).
// DDP's BucketCapacityConfig (torch/nn/parallel/distributed.py) caps the first bucket at
// dist._DEFAULT_FIRST_BUCKET_BYTES (1 MiB) only while bucket_cap_mb is left unset; once a
// user passes bucket_cap_mb, the first bucket's cap is that value too.
struct DdpSettings {
  double bucket_cap_mb = 25;              // MiB, as DDP multiplies it by 1024 * 1024
  bool bucket_cap_given = false;          // bucket_cap_mb passed to DDP (a flag, a --tune trial)
  std::optional<double> first_bucket_mb;  // MiB: a cap of its own (--first-bucket-mb); unset: DDP's rule
  bool broadcast_buffers = true;          // broadcast module buffers from rank 0 before each forward
};

// The first bucket's cap in MiB as DDP decides it from these settings.
double first_bucket_cap_mb(const DdpSettings& ddp);

// torch.distributed.fsdp.ShardingStrategy
enum class FsdpSharding { full_shard, shard_grad_op, hybrid_shard, no_shard };
std::string_view name_of(FsdpSharding sharding);  // "FULL_SHARD", ...
FsdpSharding parse_fsdp_sharding(std::string_view text, std::string_view flag);

// torch.distributed.fsdp.BackwardPrefetch; none is FSDP's backward_prefetch=None.
enum class FsdpBackwardPrefetch { backward_pre, backward_post, none };
std::string_view name_of(FsdpBackwardPrefetch prefetch);  // "BACKWARD_PRE", ...
FsdpBackwardPrefetch parse_fsdp_backward_prefetch(std::string_view text, std::string_view flag);

struct FsdpSettings {
  FsdpSharding sharding = FsdpSharding::full_shard;
  // Transformer blocks per FSDP unit (transformer_auto_wrap_policy wraps each block: 1);
  // 0 wraps nothing, so the whole model is the root unit.
  int layers_per_unit = 1;
  bool forward_prefetch = false;  // FSDP's default
  FsdpBackwardPrefetch backward_prefetch = FsdpBackwardPrefetch::backward_pre;
  bool limit_all_gathers = true;  // FSDP's default since PyTorch 2.1
  // 2: fully_shard (FSDP2), each parameter sharded on its first dimension, padded to a
  // multiple of the shards; 1: the FullyShardedDataParallel wrapper, a unit's parameters
  // flattened into one FlatParameter padded as a whole.
  int version = 2;
};

// DeepSpeed's zero_optimization block (deepspeed/runtime/zero/config.py), in elements.
struct ZeroSettings {
  std::uint64_t reduce_bucket_size = 500'000'000;
  std::uint64_t allgather_bucket_size = 500'000'000;
  bool overlap_comm = false;  // DeepSpeed turns it on for stage 3 when the file does not say
  bool overlap_comm_set = false;
  bool contiguous_gradients = true;
  bool reduce_scatter = true;
  // Stage 1/2: a bucket holding gradients of several ranks' partitions is allreduced
  // whole (average_tensor), DeepSpeed's default.
  bool use_multi_rank_bucket_allreduce = true;
  std::uint64_t stage3_prefetch_bucket_size = 50'000'000;
  std::uint64_t stage3_param_persistence_threshold = 100'000;
  std::uint64_t stage3_model_persistence_threshold = UINT64_MAX;
  std::uint64_t stage3_max_live_parameters = 1'000'000'000;
  std::uint64_t stage3_max_reuse_distance = 1'000'000'000;
  std::uint64_t sub_group_size = 1'000'000'000;  // optimizer sub-groups: no communication
  int zero_hpz_partition_size = 1;               // hpZ: secondary partition within the node

  // overlap_comm as DeepSpeed resolves it for `stage`.
  bool overlaps(int stage) const { return overlap_comm_set ? overlap_comm : stage == 3; }
};

// Megatron-LM's pipeline schedules (megatron/core/pipeline_parallel/schedules.py).
struct PipelineSettings {
  int micro_batches = 0;   // M; 0: the gradient accumulation steps, or 2 x stages when that is 1
  int virtual_stages = 1;  // > 1: interleaved 1F1B with this many model chunks per stage
};

// Megatron-LM tensor parallel (megatron/core/tensor_parallel/layers.py, mappings.py).
struct TensorParallelSettings {
  bool sequence_parallel = false;
};

// The compute that stands in for the model: a layer's forward + backward takes
// 6 x (its active parameters) x tokens FLOPs at `tflops`, forward one third of it, unless
// `layer_milliseconds` gives the forward + backward time of one layer per micro-batch.
struct ComputeSettings {
  double tflops = 400;             // sustained bf16 TFLOP/s per GPU (about 40 % of an H100's dense peak)
  double layer_milliseconds = -1;  // < 0: from the FLOPs
  double scale = 1;                // multiplies every compute time: 0.5 asks for GPUs twice as fast
};

}  // namespace commbench
