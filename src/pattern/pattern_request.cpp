#include "commbench/pattern/pattern_request.hpp"

#include <numeric>

#include <fmt/format.h>

#include "commbench/core/error.hpp"
#include "commbench/core/name_lookup.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/pattern/deepspeed_config.hpp"
#include "commbench/pattern/model_presets.hpp"
#include "commbench/pattern/model_tensors.hpp"
#include "commbench/pattern/schedule_file.hpp"

namespace commbench {

namespace {

// --vocab, --heads, --kv-heads and --tie-embeddings on the model: each checked against
// the shape it lands on.
void apply_vocabulary_and_heads(const PatternRequest& flags, ModelShape& model) {
  if (flags.vocabulary && flags.parameters)
    throw UsageError("--vocab: with --params the embedding and head are what the layers leave; give one of them");
  if (flags.vocabulary) model.vocabulary = *flags.vocabulary;
  if (flags.attention_heads) {
    model.attention_heads = *flags.attention_heads;
    model.kv_heads = 0;
  }
  if (flags.kv_heads) {
    if (model.attention_heads == 0) throw UsageError("--kv-heads: needs --heads");
    model.kv_heads = *flags.kv_heads;
  }
  if ((flags.attention_heads || flags.kv_heads) && model.hidden == 0)
    throw UsageError("--heads: needs --hidden (the heads split it)");
  if (model.attention_heads > 0 && model.hidden % model.attention_heads != 0)
    throw UsageError(fmt::format("--heads {}: does not divide --hidden {}", model.attention_heads, model.hidden));
  if (model.kv_heads > 0 && model.attention_heads % model.kv_heads != 0)
    throw UsageError(fmt::format("--kv-heads {}: does not divide --heads {}", model.kv_heads, model.attention_heads));
  if (flags.tie_embeddings) {
    if (model.vocabulary == 0) throw UsageError("--tie-embeddings: needs --vocab (or a preset's vocabulary)");
    model.tied_embeddings = true;
  }
}

}  // namespace

ModelShape model_of(const PatternRequest& flags) {
  ModelShape model;
  if (!flags.preset.empty()) {
    model = model_preset(flags.preset, "--preset");
  } else {
    if (!flags.layers) throw UsageError("--layers: needed without --preset (with --params, or --hidden and --ffn)");
    if (!flags.parameters && !flags.hidden)
      throw UsageError("--params: needed without --preset and --hidden (e.g. --params 8B --layers 32)");
    model.name = "custom";
    model.sequence = 4096;
  }
  if (flags.parameters) {
    model.parameters = *flags.parameters;
    model.vocabulary = 0;  // what the layers do not hold becomes the embedding and head
  }
  if (flags.layers) model.layers = *flags.layers;
  if (flags.hidden) {
    model.hidden = *flags.hidden;
    // A preset's heads no longer fit a hidden size they do not divide.
    if (model.attention_heads > 0 && model.hidden % model.attention_heads != 0) {
      model.attention_heads = 0;
      model.kv_heads = 0;
    }
  }
  if (flags.ffn) model.ffn = *flags.ffn;
  if (model.hidden > 0 && model.ffn == 0) model.ffn = 4 * model.hidden;
  if (flags.ffn && model.hidden == 0) throw UsageError("--ffn: needs --hidden");
  if (flags.sequence) model.sequence = *flags.sequence;
  if (flags.micro_batch) model.micro_batch = *flags.micro_batch;
  if (flags.gradient_accumulation) model.gradient_accumulation = *flags.gradient_accumulation;
  if (flags.dtype) model.dtype = *flags.dtype;
  if (flags.experts) model.experts = *flags.experts;
  if (flags.top_k) model.top_k = *flags.top_k;
  if (model.experts > 1 && model.hidden == 0) throw UsageError("--experts: needs --hidden and --ffn (expert shapes)");
  apply_vocabulary_and_heads(flags, model);
  // The total the tensors add up to (presets, or shapes without --params).
  double total = 0;
  for (const ParameterTensor& tensor : model_tensors(model)) total += static_cast<double>(tensor.elements);
  model.parameters = total;
  return model;
}

namespace {

// A ds_config value and a flag for the same thing must agree.
template <typename Value>
void agree(const std::optional<Value>& from_file, std::optional<Value> from_flag, const char* key, const char* flag,
           const std::string& file, Value& target) {
  if (!from_file) return;
  if (from_flag && *from_flag != *from_file)
    throw UsageError(
        fmt::format("--deepspeed-config {}: {} {} contradicts {} {}", file, key, *from_file, flag, *from_flag));
  target = *from_file;
}

PatternKind kind_of(const PatternRequest& flags, const std::optional<int>& stage, const std::string& file) {
  if (file.empty()) return flags.pattern.value_or(PatternKind::ddp);
  const PatternKind by_stage = stage ? (*stage == 1   ? PatternKind::zero1
                                        : *stage == 2 ? PatternKind::zero2
                                                      : PatternKind::zero3)
                                     : PatternKind::zero3;
  if (!flags.pattern) {
    if (!stage)
      throw UsageError(
          fmt::format("--deepspeed-config {}: zero_optimization.stage: not given, and no --pattern", file));
    return by_stage;
  }
  const PatternKind kind = *flags.pattern;
  if (kind != PatternKind::zero1 && kind != PatternKind::zero2 && kind != PatternKind::zero3)
    throw UsageError(fmt::format("--deepspeed-config {}: DeepSpeed's ZeRO settings do not apply to --pattern {}", file,
                                 name_of(kind)));
  if (stage && by_stage != kind)
    throw UsageError(fmt::format("--deepspeed-config {}: zero_optimization.stage {} contradicts --pattern {}", file,
                                 *stage, name_of(kind)));
  return kind;
}

ParallelLayout layout_of(const PatternRequest& flags, PatternKind kind, const ModelShape& model, int world_ranks,
                         int ranks_per_node) {
  ParallelLayout layout;
  layout.ranks_per_node = ranks_per_node;
  for (const auto& [flag, value] : {std::pair{"--tp", flags.tensor}, std::pair{"--pp", flags.pipeline},
                                    std::pair{"--dp", flags.data}, std::pair{"--ep", flags.expert}})
    if (value && *value > world_ranks)
      throw UsageError(fmt::format("{} {}: more than the job's {} ranks", flag, *value, world_ranks));
  // A model-parallel pattern on its own spans what it can unless told otherwise: tp the
  // node, pp the job, ep the data-parallel ranks.
  layout.tensor = flags.tensor.value_or(kind == PatternKind::tp ? std::gcd(world_ranks, ranks_per_node) : 1);
  layout.pipeline =
      flags.pipeline.value_or(kind == PatternKind::pipeline ? std::min(world_ranks / layout.tensor, model.layers) : 1);
  if (flags.data) {
    layout.data = *flags.data;
  } else {
    const int model_parallel = layout.tensor * layout.pipeline;
    if (model_parallel < 1 || world_ranks % model_parallel != 0)
      throw UsageError(fmt::format("--tp {} x --pp {}: does not divide the job's {} ranks", layout.tensor,
                                   layout.pipeline, world_ranks));
    layout.data = world_ranks / model_parallel;
  }
  layout.expert = flags.expert.value_or(kind == PatternKind::ep ? layout.data : 1);
  layout.validate(world_ranks);
  return layout;
}

void check_applies(bool given, bool applies, const char* flag, std::string_view what, PatternKind kind) {
  if (given && !applies)
    throw UsageError(fmt::format("{}: applies to {}, not --pattern {}", flag, what, name_of(kind)));
}

}  // namespace

namespace {

// DDP's and FSDP's own flags: refused for another framework, then applied.
void apply_framework_settings(const PatternRequest& flags, PatternConfig& config) {
  const PatternKind kind = config.kind;
  const PatternKind flavour = config.data_parallel_kind();
  const bool ddp = flavour == PatternKind::ddp;
  check_applies(flags.bucket_cap_mb.has_value(), ddp, "--bucket-cap-mb", "DDP", kind);
  check_applies(flags.first_bucket_mb.has_value(), ddp, "--first-bucket-mb", "DDP", kind);
  check_applies(flags.broadcast_buffers.has_value(), ddp, "--broadcast-buffers", "DDP", kind);
  const bool fsdp = flavour == PatternKind::fsdp;
  check_applies(flags.fsdp_sharding.has_value(), fsdp, "--fsdp-sharding", "FSDP", kind);
  check_applies(flags.fsdp_layers_per_unit.has_value(), fsdp, "--fsdp-unit", "FSDP", kind);
  check_applies(flags.forward_prefetch.has_value(), fsdp, "--forward-prefetch", "FSDP", kind);
  check_applies(flags.backward_prefetch.has_value(), fsdp, "--backward-prefetch", "FSDP", kind);
  check_applies(flags.limit_all_gathers.has_value(), fsdp, "--limit-all-gathers", "FSDP", kind);
  check_applies(flags.fsdp_version.has_value(), fsdp, "--fsdp-version", "FSDP", kind);
  if (flags.bucket_cap_mb) {
    config.ddp.bucket_cap_mb = *flags.bucket_cap_mb;
    config.ddp.bucket_cap_given = true;
  }
  if (flags.first_bucket_mb) config.ddp.first_bucket_mb = *flags.first_bucket_mb;
  if (flags.broadcast_buffers) config.ddp.broadcast_buffers = *flags.broadcast_buffers;
  if (flags.fsdp_sharding) config.fsdp.sharding = *flags.fsdp_sharding;
  if (flags.fsdp_layers_per_unit) config.fsdp.layers_per_unit = *flags.fsdp_layers_per_unit;
  if (flags.forward_prefetch) config.fsdp.forward_prefetch = *flags.forward_prefetch;
  if (flags.backward_prefetch) config.fsdp.backward_prefetch = *flags.backward_prefetch;
  if (flags.limit_all_gathers) config.fsdp.limit_all_gathers = *flags.limit_all_gathers;
  if (flags.fsdp_version) config.fsdp.version = *flags.fsdp_version;
}

// Sequence parallelism, the pipeline's micro-batches and interleaving, MoE routing.
void apply_model_parallel_settings(const PatternRequest& flags, PatternConfig& config,
                                   std::vector<std::string>& warnings) {
  const PatternKind kind = config.kind;
  const ParallelLayout& layout = config.layout;
  if (flags.sequence_parallel && layout.tensor == 1)
    throw UsageError("--sequence-parallel: needs tensor parallelism (--tp above 1)");
  config.tensor_parallel.sequence_parallel = flags.sequence_parallel;
  if (flags.micro_batches) {
    if (layout.pipeline == 1)
      throw UsageError("--micro-batches: applies to a pipeline (--pp above 1); use --grad-accum without one");
    if (flags.gradient_accumulation && *flags.gradient_accumulation != *flags.micro_batches)
      throw UsageError(
          fmt::format("--micro-batches {} contradicts --grad-accum {} (a pipeline's micro-batches are "
                      "its accumulation steps)",
                      *flags.micro_batches, *flags.gradient_accumulation));
    config.pipeline.micro_batches = *flags.micro_batches;
  }
  config.pipeline.virtual_stages = flags.interleave;
  if (config.layout.pipeline > 1) config.model.gradient_accumulation = config.micro_batches();
  if (flags.routing) {
    if (layout.expert == 1)
      warnings.push_back("--routing: no expert parallelism (--ep 1), so no token exchange it could shape");
    config.routing = *flags.routing;
  }
  if (kind == PatternKind::tp && layout.tensor == 1)
    warnings.push_back("--pattern tp: one tensor-parallel rank (--tp 1), so no tensor-parallel collectives");
  if (kind == PatternKind::pipeline && layout.pipeline == 1)
    warnings.push_back("--pattern pipeline: one stage (--pp 1), so no pipeline transfers");
}

}  // namespace

// --schedule: the file's step on a layout of the job's ranks, --tp/--pp/--ep given or 1
// and the data-parallel ranks what they leave.
PatternConfig schedule_file_config(const PatternRequest& flags, int world_ranks, int ranks_per_node,
                                   std::vector<std::string>& warnings) {
  if (flags.pattern || !flags.preset.empty() || !flags.deepspeed_config.empty())
    throw UsageError(fmt::format("--schedule: the step comes from {}; --pattern, --preset and --deepspeed-config "
                                 "describe another",
                                 flags.schedule));
  PatternConfig config;
  config.schedule_file = read_schedule_file(flags.schedule);
  config.model.name = flags.schedule;
  ParallelLayout& layout = config.layout;
  layout.tensor = flags.tensor.value_or(1);
  layout.pipeline = flags.pipeline.value_or(1);
  layout.expert = flags.expert.value_or(1);
  layout.ranks_per_node = ranks_per_node;
  layout.data = flags.data.value_or(std::max(1, world_ranks / std::max(1, layout.tensor * layout.pipeline)));
  layout.validate(world_ranks);
  if (config.schedule_file->dropped_waits > 0)
    warnings.push_back(fmt::format("--schedule {}: {} waits on steps the file does not list (compute left out of "
                                   "the dump) are not kept",
                                   flags.schedule, config.schedule_file->dropped_waits));
  // The rank count must match, and every group's members list the same collectives,
  // before anything runs: each rank's schedule is taken from the file.
  config.schedule_file->for_rank(0, world_ranks);
  check_groups_line_up(*config.schedule_file, layout);
  return config;
}

PatternConfig resolve_pattern_config(const PatternRequest& flags, int world_ranks, int ranks_per_node,
                                     std::vector<std::string>& warnings) {
  if (!flags.schedule.empty()) return schedule_file_config(flags, world_ranks, ranks_per_node, warnings);
  PatternConfig config;
  config.model = model_of(flags);
  const std::string& file = flags.deepspeed_config;
  DeepSpeedConfig deepspeed;
  if (!file.empty()) {
    deepspeed = read_deepspeed_config(file, config.model.hidden, warnings);
    agree(deepspeed.micro_batch, flags.micro_batch, "train_micro_batch_size_per_gpu", "--micro-batch", file,
          config.model.micro_batch);
    agree(deepspeed.gradient_accumulation, flags.gradient_accumulation, "gradient_accumulation_steps", "--grad-accum",
          file, config.model.gradient_accumulation);
    if (deepspeed.dtype && flags.dtype && *deepspeed.dtype != *flags.dtype)
      throw UsageError(fmt::format("--deepspeed-config {}: {}.enabled contradicts --dtype {}", file,
                                   *deepspeed.dtype == DataType::float16 ? "fp16" : "bf16", name_of(*flags.dtype)));
    if (deepspeed.dtype) config.model.dtype = *deepspeed.dtype;
    config.zero = deepspeed.zero;
  }
  config.kind = kind_of(flags, deepspeed.stage, file);
  const PatternKind kind = config.kind;
  if (kind == PatternKind::ep && config.model.experts <= 1)
    throw UsageError("--pattern ep: the model has no experts (--experts, or --preset llama-4-scout)");
  config.layout = layout_of(flags, kind, config.model, world_ranks, ranks_per_node);
  const ParallelLayout& layout = config.layout;
  if (deepspeed.train_batch_size) {
    const long long batch =
        static_cast<long long>(config.model.micro_batch) * config.model.gradient_accumulation * layout.data;
    if (batch != *deepspeed.train_batch_size)
      throw UsageError(fmt::format(
          "--deepspeed-config {}: train_batch_size {} contradicts micro-batch {} x accumulation {} x data-parallel {}",
          file, *deepspeed.train_batch_size, config.model.micro_batch, config.model.gradient_accumulation,
          layout.data));
  }

  apply_framework_settings(flags, config);
  apply_model_parallel_settings(flags, config, warnings);
  config.compute.tflops = flags.tflops;
  if (flags.compute_ms) config.compute.layer_milliseconds = *flags.compute_ms;
  config.compute.scale = flags.compute_scale;
  validate_pattern_config(config);
  return config;
}

}  // namespace commbench
