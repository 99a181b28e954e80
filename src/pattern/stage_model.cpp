#include "stage_model.hpp"

#include <algorithm>
#include <map>

namespace commbench {

double forward_seconds_of(const ComputeSettings& compute, double active_elements, double tokens, bool transformer) {
  double seconds = 0;
  if (compute.layer_milliseconds >= 0)
    seconds = transformer ? compute.layer_milliseconds / 1000.0 / 3.0 : 0.0;
  else
    seconds = 2.0 * active_elements * tokens / (compute.tflops * 1e12);
  return seconds * compute.scale;
}

StageModel stage_model(const PatternConfig& config, int world_rank) {
  const ModelShape& model = config.model;
  const ParallelLayout& layout = config.layout;
  StageModel stage;
  stage.element_bytes = size_of(model.dtype);
  stage.tensors = rank_tensors(model, layout, world_rank, config.pipeline.virtual_stages);
  stage.activation_bytes = static_cast<std::uint64_t>(model.micro_batch) * static_cast<std::uint64_t>(model.sequence) *
                           static_cast<std::uint64_t>(std::max(model.hidden, 1)) * stage.element_bytes;

  const int stage_index = layout.pipeline_rank(world_rank);
  const int chunks = config.pipeline.virtual_stages;
  const auto chunk_of = [&](int layer) {
    if (layer == kEmbeddingLayer) return 0;
    if (layer >= model.layers) return chunks - 1;
    for (int chunk = 0; chunk < chunks; ++chunk) {
      const auto [first, last] =
          stage_layers(model.layers, layout.pipeline * chunks, chunk * layout.pipeline + stage_index);
      if (layer >= first && layer < last) return chunk;
    }
    return 0;
  };

  // A routed expert's share of the compute: each token passes through top_k of the
  // `experts`, and this rank's experts / ep of them serve the whole expert group's tokens.
  const double expert_weight =
      model.experts > 1 ? static_cast<double>(model.top_k) * layout.expert / model.experts : 1.0;
  const double tokens = static_cast<double>(model.micro_batch) * model.sequence;
  std::map<int, std::size_t> position;  // layer -> index in stage.layers
  for (std::size_t index = 0; index < stage.tensors.size(); ++index) {
    const ParameterTensor& tensor = stage.tensors[index];
    auto found = position.find(tensor.layer);
    if (found == position.end()) {
      LocalLayer layer;
      layer.layer = tensor.layer;
      layer.chunk = chunk_of(tensor.layer);
      layer.transformer = tensor.layer >= 0 && tensor.layer < model.layers;
      found = position.emplace(tensor.layer, stage.layers.size()).first;
      stage.layers.push_back(layer);
    }
    LocalLayer& layer = stage.layers[found->second];
    layer.tensors.push_back(index);
    layer.moe = layer.moe || tensor.expert >= 0;
  }
  for (LocalLayer& layer : stage.layers) {
    double attention = 0;
    double active = 0;
    for (const std::size_t index : layer.tensors) {
      const ParameterTensor& tensor = stage.tensors[index];
      if (tensor.layer == kEmbeddingLayer) continue;  // a lookup, not a matmul
      const double elements = static_cast<double>(tensor.elements) * (tensor.expert >= 0 ? expert_weight : 1.0);
      active += elements;
      if (tensor.attention) attention += elements;
    }
    layer.forward_seconds = forward_seconds_of(config.compute, active, tokens, layer.transformer);
    if (active > 0 && attention > 0) layer.attention_share = attention / active;
  }
  // Layers come out in definition order, which is forward order within each chunk;
  // interleaved chunks are run one at a time, so order by chunk first.
  std::stable_sort(stage.layers.begin(), stage.layers.end(),
                   [](const LocalLayer& left, const LocalLayer& right) { return left.chunk < right.chunk; });
  return stage;
}

}  // namespace commbench
