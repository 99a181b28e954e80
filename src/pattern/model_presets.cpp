#include "commbench/pattern/model_presets.hpp"

#include <array>

#include "commbench/core/error.hpp"
#include "commbench/core/name_lookup.hpp"
#include "commbench/pattern/model_tensors.hpp"

namespace commbench {
namespace {

// Shapes from each model's config.json on Hugging Face (hidden_size, num_hidden_layers,
// intermediate_size, num_attention_heads, num_key_value_heads, vocab_size,
// tie_word_embeddings; Llama 4: text_config, num_local_experts, num_experts_per_tok, and
// the shared expert of Llama4TextMoe). Sequence: the context each was pre-trained at
// (Mistral: its 4096-token sliding window).
ModelShape llama(std::string name, int layers, int hidden, int ffn, int heads, int vocabulary, int sequence) {
  ModelShape model;
  model.name = std::move(name);
  model.layers = layers;
  model.hidden = hidden;
  model.ffn = ffn;
  model.attention_heads = heads;
  model.kv_heads = 8;
  model.vocabulary = vocabulary;
  model.sequence = sequence;
  return model;
}

ModelShape preset_shape(std::string_view name) {
  if (name == "llama-3-8b") return llama("llama-3-8b", 32, 4096, 14336, 32, 128256, 8192);
  if (name == "mistral-7b") return llama("mistral-7b", 32, 4096, 14336, 32, 32000, 4096);
  if (name == "llama-3-70b") return llama("llama-3-70b", 80, 8192, 28672, 64, 128256, 8192);
  ModelShape scout = llama("llama-4-scout", 48, 5120, 8192, 40, 202048, 8192);
  scout.experts = 16;
  scout.top_k = 1;
  scout.shared_experts = 1;
  return scout;
}

constexpr std::array<std::string_view, 4> kPresetNames = {"llama-3-8b", "mistral-7b", "llama-3-70b", "llama-4-scout"};

}  // namespace

std::span<const std::string_view> model_preset_names() { return kPresetNames; }

ModelShape model_preset(std::string_view name, std::string_view flag) {
  const std::string wanted = detail::lower_case(name);
  for (const std::string_view known : kPresetNames) {
    if (wanted != known) continue;
    ModelShape model = preset_shape(known);
    double total = 0;
    for (const ParameterTensor& tensor : model_tensors(model)) total += static_cast<double>(tensor.elements);
    model.parameters = total;
    return model;
  }
  std::string names;
  for (const std::string_view known : kPresetNames) names += (names.empty() ? "" : ", ") + std::string(known);
  throw UsageError(std::string(flag) + ": unknown preset '" + excerpt(name) + "'; expected one of: " + names);
}

}  // namespace commbench
