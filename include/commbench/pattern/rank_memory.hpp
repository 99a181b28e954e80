// What one rank's GPU holds for the model under a data-parallel framework's settings, the
// memory `bench-patterns --tune` reports for every candidate and `--memory-limit` checks:
// the model states (parameters, gradients, the optimizer's fp32 copy and Adam's two
// moments), whole or partitioned as the framework keeps them, and the buffers its
// settings size (ZeRO's reduce bucket and optimizer sub-group, the parameters ZeRO-3 and
// FSDP hold gathered at once, those ZeRO-3 keeps persistent). Adam, as the frameworks' own
// estimators count it (DeepSpeed's estimate_zero*_model_states_mem_needs: in half precision
// 2 bytes of parameter, 2 of gradient, 12 of optimizer state per element; an fp32 model's
// parameters are the optimizer's fp32 copy themselves). Activations and
// the allocator's fragmentation are not counted: the knobs searched do not change them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "commbench/pattern/pattern_config.hpp"

namespace commbench {

struct MemoryPart {
  std::string name;  // "parameter partitions", "reduce bucket", ...
  std::uint64_t bytes = 0;
};

struct RankMemory {
  int world_rank = 0;
  std::vector<MemoryPart> parts;  // the framework's own order: parameters, gradients, optimizer, buffers
  std::uint64_t total() const;
};

// The memory of `world_rank` under `config`'s framework (ddp, fsdp, zero1..3; a
// model-parallel pattern reduces its gradients as DDP does).
RankMemory rank_memory(const PatternConfig& config, int world_rank);

// The rank that needs the most: ranks differ by pipeline stage, tensor slice and expert
// shard, not by their place in the data-parallel group, so one rank of each data group is
// counted.
RankMemory largest_rank_memory(const PatternConfig& config);

}  // namespace commbench
