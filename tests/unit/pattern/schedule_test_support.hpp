// Shared by the schedule tests: small models, and sums over a schedule's steps.
#pragma once

#include <cstdint>
#include <functional>

#include "commbench/pattern/pattern_config.hpp"
#include "commbench/pattern/schedule.hpp"

namespace commbench::testing {

// A Llama-shaped model small enough to reason about by hand: `layers` blocks of hidden
// 1024, ffn 4096, 8 heads (no grouped-query attention), a 1000-token vocabulary.
inline ModelShape small_llama(int layers) {
  ModelShape model;
  model.name = "small";
  model.layers = layers;
  model.hidden = 1024;
  model.ffn = 4096;
  model.attention_heads = 8;
  model.vocabulary = 1000;
  model.sequence = 128;
  return model;
}

inline PatternConfig config_of(PatternKind kind, const ModelShape& model, int data, int tensor = 1, int pipeline = 1) {
  PatternConfig config;
  config.kind = kind;
  config.model = model;
  config.layout.data = data;
  config.layout.tensor = tensor;
  config.layout.pipeline = pipeline;
  config.layout.ranks_per_node = tensor * pipeline * data;
  return config;
}

inline bool is_op(const ScheduleStep& step, Collective op) {
  return step.kind == StepKind::collective && step.op == op;
}

inline std::uint64_t total_bytes(const RankSchedule& schedule, const std::function<bool(const ScheduleStep&)>& which) {
  std::uint64_t bytes = 0;
  for (const ScheduleStep& step : schedule.steps)
    if (which(step)) bytes += step.bytes;
  return bytes;
}

inline std::size_t count(const RankSchedule& schedule, const std::function<bool(const ScheduleStep&)>& which) {
  std::size_t found = 0;
  for (const ScheduleStep& step : schedule.steps)
    if (which(step)) ++found;
  return found;
}

}  // namespace commbench::testing
