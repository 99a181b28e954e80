// What a user asked of bench-patterns' modelled step, and the rules that turn it into the
// PatternConfig the schedules are built from: the model (or a preset), the framework and
// its settings (or the user's ds_config.json), the parallel layout and the compute
// stand-in. Each contradiction between the flags, the preset and the DeepSpeed file is a
// one-line UsageError naming the flag or key.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "commbench/core/dtype.hpp"
#include "commbench/core/peer_distribution.hpp"
#include "commbench/pattern/framework_settings.hpp"
#include "commbench/pattern/model_tensors.hpp"
#include "commbench/pattern/pattern_config.hpp"

namespace commbench {

// What the command line said; empty optionals were not given, so a preset or the
// DeepSpeed file decides, and a contradiction between them can be named.
struct PatternRequest {
  std::optional<PatternKind> pattern;
  std::string preset;
  // Model
  std::optional<double> parameters;
  std::optional<int> layers;
  std::optional<int> hidden;
  std::optional<int> ffn;
  std::optional<int> sequence;
  std::optional<int> micro_batch;
  std::optional<int> gradient_accumulation;
  std::optional<DataType> dtype;
  std::optional<int> experts;
  std::optional<int> top_k;
  std::optional<int> vocabulary;
  std::optional<int> attention_heads;
  std::optional<int> kv_heads;
  bool tie_embeddings = false;
  // Layout
  std::optional<int> tensor;
  std::optional<int> pipeline;
  std::optional<int> data;  // default: the ranks tp x pp leave
  std::optional<int> expert;
  // Pipeline and tensor parallel
  std::optional<int> micro_batches;
  int interleave = 1;
  bool sequence_parallel = false;
  std::optional<PeerDistribution> routing;
  // --schedule: the step read from a file (schedule_file.hpp) instead of modelled
  std::string schedule;
  // DeepSpeed
  std::string deepspeed_config;
  // DDP
  std::optional<double> bucket_cap_mb;
  std::optional<double> first_bucket_mb;
  std::optional<bool> broadcast_buffers;
  // FSDP
  std::optional<FsdpSharding> fsdp_sharding;
  std::optional<int> fsdp_layers_per_unit;  // --fsdp-unit: "layer" 1, "model" 0, or N blocks
  std::optional<bool> forward_prefetch;
  std::optional<FsdpBackwardPrefetch> backward_prefetch;
  std::optional<bool> limit_all_gathers;
  std::optional<int> fsdp_version;  // --fsdp-version: 1 (the wrapper) or 2 (fully_shard)
  // Compute stand-in
  double tflops = ComputeSettings{}.tflops;
  std::optional<double> compute_ms;
  double compute_scale = 1;
};

// The model the request and its preset describe; UsageError naming the flag otherwise.
ModelShape model_of(const PatternRequest& request);

// The config for a job of `world_ranks` ranks, `ranks_per_node` of them per node.
// Warnings (unknown ds_config keys, settings that do not apply) are appended to
// `warnings`; contradictions and impossible requests are a UsageError naming the flag or key.
PatternConfig resolve_pattern_config(const PatternRequest& flags, int world_ranks, int ranks_per_node,
                                     std::vector<std::string>& warnings);

}  // namespace commbench
