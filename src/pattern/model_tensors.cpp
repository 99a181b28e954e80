#include "commbench/pattern/model_tensors.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "commbench/core/error.hpp"

namespace commbench {
namespace {

using Elements = std::uint64_t;

// One transformer block's tensors in Hugging Face's definition order.
void append_layer(const ModelShape& model, int layer, std::vector<ParameterTensor>& tensors) {
  const auto hidden = static_cast<Elements>(model.hidden);
  const auto ffn = static_cast<Elements>(model.ffn);
  const Elements kv_dim =
      (model.attention_heads > 0 && model.kv_heads > 0)
          ? hidden * static_cast<Elements>(model.kv_heads) / static_cast<Elements>(model.attention_heads)
          : hidden;
  const std::string prefix = fmt::format("layers.{}.", layer);
  // A weight is [output features, input features], as nn.Linear holds it.
  const auto add = [&](std::string name, Elements rows, Elements columns, bool attention, int expert = -1) {
    tensors.push_back({prefix + name, rows * columns, layer, expert, attention, rows});
  };
  add("input_layernorm", hidden, 1, true);
  add("self_attn.q_proj", hidden, hidden, true);
  add("self_attn.k_proj", kv_dim, hidden, true);
  add("self_attn.v_proj", kv_dim, hidden, true);
  add("self_attn.o_proj", hidden, hidden, true);
  add("post_attention_layernorm", hidden, 1, false);
  if (model.experts <= 1) {
    add("mlp.gate_proj", ffn, hidden, false);
    add("mlp.up_proj", ffn, hidden, false);
    add("mlp.down_proj", hidden, ffn, false);
    return;
  }
  add("feed_forward.router", static_cast<Elements>(model.experts), hidden, false);
  for (int expert = 0; expert < model.experts; ++expert) {
    add(fmt::format("feed_forward.experts.{}.gate_up_proj", expert), 2 * ffn, hidden, false, expert);
    add(fmt::format("feed_forward.experts.{}.down_proj", expert), hidden, ffn, false, expert);
  }
  for (int shared = 0; shared < model.shared_experts; ++shared) {
    add(fmt::format("feed_forward.shared_expert.{}.gate_proj", shared), ffn, hidden, false);
    add(fmt::format("feed_forward.shared_expert.{}.up_proj", shared), ffn, hidden, false);
    add(fmt::format("feed_forward.shared_expert.{}.down_proj", shared), hidden, ffn, false);
  }
}

bool is_norm(const ParameterTensor& tensor) { return tensor.name.find("norm") != std::string::npos; }

}  // namespace

std::vector<ParameterTensor> model_tensors(const ModelShape& model) {
  if (model.layers < 1) throw UsageError(fmt::format("--layers {}: must be at least 1", model.layers));
  std::vector<ParameterTensor> tensors;
  if (model.hidden <= 0) {
    // Only a parameter count: each layer is one tensor, the remainder on the last.
    const auto total = static_cast<Elements>(std::llround(model.parameters));
    if (total < static_cast<Elements>(model.layers))
      throw UsageError(fmt::format("--params {}: fewer than one parameter per layer", model.parameters));
    const Elements per_layer = total / static_cast<Elements>(model.layers);
    for (int layer = 0; layer < model.layers; ++layer) {
      const Elements extra = layer == model.layers - 1 ? total - per_layer * static_cast<Elements>(model.layers) : 0;
      tensors.push_back({fmt::format("layers.{}", layer), per_layer + extra, layer, -1, false});
    }
    return tensors;
  }
  std::vector<ParameterTensor> layers;
  for (int layer = 0; layer < model.layers; ++layer) append_layer(model, layer, layers);
  Elements in_layers = 0;
  for (const ParameterTensor& tensor : layers) in_layers += tensor.elements;
  const auto hidden = static_cast<Elements>(model.hidden);

  Elements embedding = 0;
  Elements head = 0;
  if (model.vocabulary > 0) {
    embedding = static_cast<Elements>(model.vocabulary) * hidden;
    head = model.tied_embeddings ? 0 : embedding;
  } else if (model.parameters > 0) {
    // What the layers and the final norm do not hold is the embedding and the head.
    const double rest = model.parameters - static_cast<double>(in_layers + hidden);
    if (rest < 0)
      throw UsageError(fmt::format("--params {}: cannot hold {} layers of {} parameters (--hidden {}, --ffn {})",
                                   model.parameters, model.layers, in_layers / static_cast<Elements>(model.layers),
                                   model.hidden, model.ffn));
    embedding = static_cast<Elements>(std::llround(rest)) / 2;
    head = static_cast<Elements>(std::llround(rest)) - embedding;
  }
  // The embedding and head are [vocabulary, hidden]; a remainder that is no whole number
  // of rows has no known first dimension.
  const auto rows_of = [&](Elements elements) { return elements % hidden == 0 ? elements / hidden : Elements{0}; };
  if (embedding > 0) tensors.push_back({"embed_tokens", embedding, kEmbeddingLayer, -1, true, rows_of(embedding)});
  tensors.insert(tensors.end(), layers.begin(), layers.end());
  tensors.push_back({"norm", hidden, model.layers, -1, false, hidden});
  if (head > 0) tensors.push_back({"lm_head", head, model.layers, -1, false, rows_of(head)});
  return tensors;
}

double active_parameters(const ModelShape& model) {
  double active = 0;
  for (const ParameterTensor& tensor : model_tensors(model)) {
    const double share = tensor.expert >= 0 ? static_cast<double>(model.top_k) / model.experts : 1.0;
    active += static_cast<double>(tensor.elements) * share;
  }
  return active;
}

std::uint64_t flat_padded_elements(std::uint64_t elements, std::uint64_t shards) {
  shards = std::max<std::uint64_t>(shards, 1);
  return (elements + shards - 1) / shards * shards;
}

std::uint64_t row_padded_elements(const ParameterTensor& tensor, std::uint64_t shards) {
  if (tensor.rows == 0 || tensor.elements % tensor.rows != 0) return flat_padded_elements(tensor.elements, shards);
  return flat_padded_elements(tensor.rows, shards) * (tensor.elements / tensor.rows);
}

std::pair<int, int> stage_layers(int layers, int stages, int stage) {
  const int base = layers / stages;
  const int extra = layers % stages;
  const int first = stage * base + std::min(stage, extra);
  return {first, first + base + (stage < extra ? 1 : 0)};
}

std::vector<ParameterTensor> rank_tensors(const ModelShape& model, const ParallelLayout& layout, int world_rank,
                                          int chunks) {
  const int stage = layout.pipeline_rank(world_rank);
  const int virtual_stages = layout.pipeline * chunks;
  const auto holds_layer = [&](int layer) {
    for (int chunk = 0; chunk < chunks; ++chunk) {
      const auto [first, last] = stage_layers(model.layers, virtual_stages, chunk * layout.pipeline + stage);
      if (layer >= first && layer < last) return true;
    }
    return false;
  };
  const int experts_per_rank = model.experts > 1 ? model.experts / layout.expert : 0;
  const int expert_rank = layout.data_rank(world_rank) % layout.expert;
  std::vector<ParameterTensor> held;
  for (ParameterTensor tensor : model_tensors(model)) {
    const bool on_stage = tensor.layer == kEmbeddingLayer ? stage == 0
                          : tensor.layer >= model.layers  ? stage == layout.pipeline - 1
                                                          : holds_layer(tensor.layer);
    if (!on_stage) continue;
    if (tensor.expert >= 0 && tensor.expert / std::max(experts_per_rank, 1) != expert_rank) continue;
    // Megatron splits every matrix over the tensor-parallel ranks and replicates norms.
    if (!is_norm(tensor) && layout.tensor > 1) {
      tensor.elements = (tensor.elements + layout.tensor - 1) / layout.tensor;
      tensor.rows = 0;  // column- or row-parallel: the slice's first dimension is not kept
    }
    held.push_back(std::move(tensor));
  }
  return held;
}

}  // namespace commbench
