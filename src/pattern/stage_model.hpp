// What one rank computes in a step: its tensors (model_tensors.hpp) grouped into the layers
// its pipeline stage runs, in forward order, each with its compute stand-in time. The
// embedding and the final norm + output head count as layers of their own (they are
// modules whose gradients become ready at their own point in backward).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "commbench/pattern/model_tensors.hpp"
#include "commbench/pattern/pattern_config.hpp"

namespace commbench {

struct LocalLayer {
  int layer = 0;                     // kEmbeddingLayer, a model layer, or model.layers for the head
  int chunk = 0;                     // the model chunk (interleaved pipeline) it belongs to
  std::vector<std::size_t> tensors;  // indices into StageModel::tensors, definition order
  double forward_seconds = 0;        // backward takes twice as long
  double attention_share = 0.5;      // of the compute, before the MLP (where tp/ep communicate)
  bool transformer = false;          // a transformer block (not the embedding or the head)
  bool moe = false;                  // holds routed experts
};

struct StageModel {
  std::vector<ParameterTensor> tensors;
  std::vector<LocalLayer> layers;      // forward order
  std::uint64_t activation_bytes = 0;  // one micro-batch's hidden states: micro_batch x sequence x hidden
  std::size_t element_bytes = 2;

  std::uint64_t bytes_of(std::size_t tensor) const { return tensors[tensor].elements * element_bytes; }
};

// Forward seconds of a layer holding `active_elements` active parameters on this rank:
// 2 x parameters x tokens FLOPs (a third of 6 N tokens) at compute.tflops, or a third of
// compute.layer_milliseconds; both times compute.scale.
double forward_seconds_of(const ComputeSettings& compute, double active_elements, double tokens, bool transformer);

StageModel stage_model(const PatternConfig& config, int world_rank);

}  // namespace commbench
