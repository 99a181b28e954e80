// A transformer's parameter tensors in definition order (module.parameters()), the unit
// every framework buckets, wraps and fetches: DDP fills buckets with whole tensors, FSDP
// wraps layers, ZeRO-3 fetches a module's tensors and keeps the small ones resident.
// Shapes follow Hugging Face's Llama/Mistral/Llama-4 modules (q/k/v/o projections,
// gate/up/down MLP, two RMSNorms per layer; MoE layers: a router, routed and shared experts).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "commbench/pattern/pattern_config.hpp"

namespace commbench {

// Where a tensor sits: the input embedding before the layers, the final norm and the
// output head after them.
inline constexpr int kEmbeddingLayer = -1;

struct ParameterTensor {
  std::string name;  // "layers.3.mlp.down_proj", "embed_tokens", "lm_head"
  std::uint64_t elements = 0;
  int layer = 0;           // kEmbeddingLayer, 0..layers-1, or `layers` for the final norm and head
  int expert = -1;         // a routed expert's index (sharded over the expert group); -1 otherwise
  bool attention = false;  // attention (or norm before it) rather than MLP: splits a layer's compute
  std::uint64_t rows = 0;  // its first dimension (a weight's output features); 0: not known
};

// What a tensor occupies once sharded over `shards` ranks and gathered back: FSDP2 shards
// each parameter on its first dimension, padded to a multiple of the shards
// (torch/distributed/fsdp/_fully_shard/_fsdp_param.py); without a known first dimension,
// as a flat tensor.
std::uint64_t row_padded_elements(const ParameterTensor& tensor, std::uint64_t shards);
// `elements` flattened and padded to a multiple of `shards`: DeepSpeed ZeRO-3's partition
// of ceil(numel / ranks) per rank, FSDP1's FlatParameter.
std::uint64_t flat_padded_elements(std::uint64_t elements, std::uint64_t shards);

// The whole model's tensors, unsharded. UsageError naming --params when the parameter
// count cannot hold the layers the shape describes.
std::vector<ParameterTensor> model_tensors(const ModelShape& model);

// Parameters a token passes through (MoE: top_k of the routed experts, plus shared ones);
// the N of 6 x N x tokens.
double active_parameters(const ModelShape& model);

// What one rank holds of the model under `layout`: its pipeline stage's layers (with
// `chunks` > 1, those of virtual stages chunk x pp + stage; the embedding on the first
// virtual stage, the head on the last), a 1/tp slice of each matrix (norms replicated),
// and experts / ep of the routed experts. Definition order is kept.
std::vector<ParameterTensor> rank_tensors(const ModelShape& model, const ParallelLayout& layout, int world_rank,
                                          int chunks = 1);

// The layers [first, last) (virtual) pipeline stage `stage` of `stages` holds: split as
// evenly as Megatron splits them, the earlier stages taking the remainder.
std::pair<int, int> stage_layers(int layers, int stages, int stage);

}  // namespace commbench
