// The flags that describe a training step for bench-patterns: the model (or a preset),
// the framework and its settings (or the user's ds_config.json), the parallel layout and
// the compute stand-in. add_pattern_flags() puts them on a CLI11 app; each value is
// parsed as CLI11 meets it, with the one-line message naming the flag.
// resolve_pattern_config() then combines them, the preset and the DeepSpeed file into
// the PatternConfig the schedules are built from, once the job's rank count is known.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "commbench/core/dtype.hpp"
#include "commbench/core/peer_distribution.hpp"
#include "commbench/pattern/framework_settings.hpp"
#include "commbench/pattern/pattern_config.hpp"

namespace commbench {

// What the command line said; empty optionals were not given, so a preset or the
// DeepSpeed file decides, and a contradiction between them can be named.
struct PatternFlags {
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

void add_pattern_flags(CLI::App& app, PatternFlags& flags);

// The config for a job of `world_ranks` ranks, `ranks_per_node` of them per node.
// Warnings (unknown ds_config keys, settings that do not apply) are appended to
// `warnings`; contradictions and impossible requests are a UsageError naming the flag or key.
PatternConfig resolve_pattern_config(const PatternFlags& flags, int world_ranks, int ranks_per_node,
                                     std::vector<std::string>& warnings);

}  // namespace commbench
