#include "commbench/pattern/pattern_description.hpp"

#include "commbench/core/number_text.hpp"
#include "commbench/pattern/model_tensors.hpp"

namespace commbench {

std::vector<std::pair<std::string, std::string>> describe_pattern_config(const PatternConfig& config) {
  std::vector<std::pair<std::string, std::string>> pairs;
  const auto add = [&pairs](std::string name, std::string value) {
    pairs.emplace_back(std::move(name), std::move(value));
  };
  const auto whole = [](auto value) { return std::to_string(value); };
  const auto flag = [](bool value) { return std::string(value ? "1" : "0"); };
  const ModelShape& model = config.model;
  add("pattern", std::string(name_of(config.kind)));
  add("model", model.name);
  add("parameters", significant_text(model.parameters, 4));
  add("active_parameters", significant_text(active_parameters(model), 4));
  add("layers", whole(model.layers));
  if (model.hidden > 0) {
    add("hidden", whole(model.hidden));
    add("ffn", whole(model.ffn));
  }
  add("sequence", whole(model.sequence));
  add("micro_batch", whole(model.micro_batch));
  add("gradient_accumulation", whole(model.gradient_accumulation));
  add("dtype", std::string(name_of(model.dtype)));
  if (model.experts > 1) {
    add("experts", whole(model.experts));
    add("top_k", whole(model.top_k));
  }
  const ParallelLayout& layout = config.layout;
  add("tp", whole(layout.tensor));
  add("pp", whole(layout.pipeline));
  add("dp", whole(layout.data));
  add("ep", whole(layout.expert));
  if (layout.pipeline > 1) {
    add("micro_batches", whole(config.micro_batches()));
    add("interleave", whole(config.pipeline.virtual_stages));
  }
  if (layout.tensor > 1) add("sequence_parallel", flag(config.tensor_parallel.sequence_parallel));
  if (layout.expert > 1) add("routing", to_string(config.routing));
  switch (config.data_parallel_kind()) {
    case PatternKind::fsdp:
      add("sharding_strategy", std::string(name_of(config.fsdp.sharding)));
      add("fsdp_unit_layers", whole(config.fsdp.layers_per_unit));
      add("forward_prefetch", flag(config.fsdp.forward_prefetch));
      add("backward_prefetch", std::string(name_of(config.fsdp.backward_prefetch)));
      add("limit_all_gathers", flag(config.fsdp.limit_all_gathers));
      break;
    case PatternKind::zero1:
    case PatternKind::zero2:
    case PatternKind::zero3: {
      const ZeroSettings& zero = config.zero;
      const int stage = config.zero_stage();
      add("zero_optimization.stage", whole(stage));
      add("zero_optimization.overlap_comm", flag(zero.overlaps(stage)));
      add("zero_optimization.reduce_bucket_size", whole(zero.reduce_bucket_size));
      if (stage < 3) {
        add("zero_optimization.allgather_bucket_size", whole(zero.allgather_bucket_size));
        add("zero_optimization.reduce_scatter", flag(zero.reduce_scatter));
        break;
      }
      add("zero_optimization.stage3_prefetch_bucket_size", whole(zero.stage3_prefetch_bucket_size));
      add("zero_optimization.stage3_param_persistence_threshold", whole(zero.stage3_param_persistence_threshold));
      add("zero_optimization.stage3_max_live_parameters", whole(zero.stage3_max_live_parameters));
      add("zero_optimization.stage3_max_reuse_distance", whole(zero.stage3_max_reuse_distance));
      if (zero.zero_hpz_partition_size > 1)
        add("zero_optimization.zero_hpz_partition_size", whole(zero.zero_hpz_partition_size));
      break;
    }
    default:
      add("bucket_cap_mb", significant_text(config.ddp.bucket_cap_mb));
      add("first_bucket_mb", significant_text(first_bucket_cap_mb(config.ddp)));
      add("broadcast_buffers", flag(config.ddp.broadcast_buffers));
      break;
  }
  if (config.compute.layer_milliseconds >= 0)
    add("compute_ms", significant_text(config.compute.layer_milliseconds));
  else
    add("tflops", significant_text(config.compute.tflops));
  add("compute_scale", significant_text(config.compute.scale));
  return pairs;
}

}  // namespace commbench
