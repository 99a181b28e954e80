#include "pattern_flags.hpp"

#include <numeric>

#include <fmt/format.h>

#include "command_line_parser.hpp"
#include "pattern_flag_parsers.hpp"

#include "commbench/cli/flag_values.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/name_lookup.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/pattern/deepspeed_config.hpp"
#include "commbench/pattern/model_presets.hpp"
#include "commbench/pattern/model_tensors.hpp"
#include "commbench/pattern/schedule_file.hpp"

namespace commbench {
namespace {

// --fsdp-unit: "layer" (transformer_auto_wrap_policy), "model" (no wrapping) or N blocks.
std::optional<int> parse_fsdp_unit(const std::string& text) {
  const std::string lower = detail::lower_case(text);
  if (lower == "layer" || lower == "block") return 1;
  if (lower == "model" || lower == "none") return 0;
  try {
    return whole_at_least("--fsdp-unit", 1)(text);
  } catch (const UsageError&) {
    throw UsageError(fmt::format("--fsdp-unit: '{}' is not layer, model or a number of layers", excerpt(text)));
  }
}

}  // namespace


namespace {


// How the ranks are split: tp, pp, dp, ep, micro-batches, interleaving, routing.
void add_layout_flags(CLI::App& app, PatternFlags& flags) {
  add_parsed_option(app, "--tp", flags.tensor, whole_at_least("--tp", 1),
                    "Tensor-parallel ranks (consecutive ranks, within a node)", "N")
      ->group(kLayoutGroup);
  add_parsed_option(app, "--pp", flags.pipeline, whole_at_least("--pp", 1), "Pipeline stages", "N")->group(kLayoutGroup);
  add_parsed_option(app, "--dp", flags.data, whole_at_least("--dp", 1),
                    "Data-parallel ranks; default: the ranks --tp x --pp leave", "N")
      ->group(kLayoutGroup);
  add_parsed_option(app, "--ep", flags.expert, whole_at_least("--ep", 1),
                    "Expert-parallel ranks, carved out of the data-parallel ones", "N")
      ->group(kLayoutGroup);
  add_parsed_option(app, "--micro-batches,-M", flags.micro_batches, whole_at_least("--micro-batches", 1),
                    "Pipeline micro-batches per step (M); default --grad-accum, or 2 x --pp", "N")
      ->group(kLayoutGroup);
  add_parsed_option(
      app, "--interleave", flags.interleave,
      [](const std::string& text) { return *whole_at_least("--interleave", 1)(text); },
      "Model chunks per pipeline stage: above 1 runs Megatron's interleaved 1F1B", "V")
      ->group(kLayoutGroup);
  app.add_flag("--sequence-parallel", flags.sequence_parallel,
               "Megatron sequence parallelism: reduce-scatter + all-gather instead of tensor-parallel allreduces")
      ->group(kLayoutGroup);
  add_parsed_option(
      app, "--routing", flags.routing,
      [](const std::string& text) { return std::optional(parse_peer_distribution(text, "--routing")); },
      "MoE token routing over the expert group: uniform, zipf:S (skew S) or hot:F (fraction F to one)", "DISTRIBUTION")
      ->group(kLayoutGroup);
}

// The framework's own settings: a ds_config.json, DDP's buckets, FSDP's knobs.
void add_framework_flags(CLI::App& app, PatternFlags& flags) {
  add_parsed_option(
      app, "--schedule", flags.schedule,
      [](const std::string& text) { return non_empty_file_name(text, "--schedule"); },
      "A step in --dump-schedule's JSON lines (from bench-patterns or bench-replay --dump-schedule) to run, "
      "predict or trace instead of a modelled pattern; --tp/--pp/--ep say the groups",
      "FILE")
      ->group(kFrameworkGroup);
  add_parsed_option(
      app, "--deepspeed-config", flags.deepspeed_config,
      [](const std::string& text) { return non_empty_file_name(text, "--deepspeed-config"); },
      "A DeepSpeed ds_config.json: its zero_optimization block (and micro-batch, accumulation, bf16/fp16)", "FILE")
      ->group(kFrameworkGroup);
  add_parsed_option(
      app, "--bucket-cap-mb", flags.bucket_cap_mb,
      [](const std::string& text) { return std::optional(positive_number("--bucket-cap-mb")(text)); },
      "DDP bucket_cap_mb (MiB; default 25)", "MB")
      ->group(kFrameworkGroup);
  add_parsed_option(
      app, "--first-bucket-mb", flags.first_bucket_mb,
      [](const std::string& text) { return std::optional(positive_number("--first-bucket-mb")(text)); },
      "DDP's first bucket cap (MiB; default: 1, or --bucket-cap-mb when that is given, as DDP does)", "MB")
      ->group(kFrameworkGroup);
  add_parsed_option(app, "--broadcast-buffers", flags.broadcast_buffers, zero_or_one("--broadcast-buffers"),
                    "DDP broadcast_buffers: 0 or 1 (default 1)", "0|1")
      ->group(kFrameworkGroup);
  add_parsed_option(
      app, "--fsdp-sharding", flags.fsdp_sharding,
      [](const std::string& text) { return std::optional(parse_fsdp_sharding(text, "--fsdp-sharding")); },
      "FSDP sharding_strategy: full_shard (default), shard_grad_op, hybrid_shard, no_shard", "NAME")
      ->group(kFrameworkGroup);
  add_parsed_option(app, "--fsdp-unit", flags.fsdp_layers_per_unit, parse_fsdp_unit,
                    "FSDP wrapping unit: layer (each transformer block, default), N blocks, or model (no wrapping)",
                    "UNIT")
      ->group(kFrameworkGroup);
  add_parsed_option(app, "--forward-prefetch", flags.forward_prefetch, zero_or_one("--forward-prefetch"),
                    "FSDP forward_prefetch: 0 (default) or 1", "0|1")
      ->group(kFrameworkGroup);
  add_parsed_option(
      app, "--backward-prefetch", flags.backward_prefetch,
      [](const std::string& text) { return std::optional(parse_fsdp_backward_prefetch(text, "--backward-prefetch")); },
      "FSDP backward_prefetch: backward_pre (default), backward_post or none", "NAME")
      ->group(kFrameworkGroup);
  add_parsed_option(
      app, "--fsdp-version", flags.fsdp_version,
      [](const std::string& text) {
        if (text != "1" && text != "2") throw UsageError(fmt::format("--fsdp-version: expected 1 or 2 (got {})", text));
        return std::optional<int>(text == "1" ? 1 : 2);
      },
      "FSDP 2 (fully_shard: each parameter sharded on its first dimension) or 1 (the FullyShardedDataParallel "
      "wrapper: one flat parameter per unit); default 2",
      "1|2")
      ->group(kFrameworkGroup);
  add_parsed_option(app, "--limit-all-gathers", flags.limit_all_gathers, zero_or_one("--limit-all-gathers"),
                    "FSDP limit_all_gathers: 0 or 1 (default 1)", "0|1")
      ->group(kFrameworkGroup);
}

// The compute stand-in between the collectives.
void add_compute_flags(CLI::App& app, PatternFlags& flags) {
  add_parsed_option(app, "--tflops", flags.tflops, positive_number("--tflops"),
                    "Sustained TFLOP/s per GPU the compute stand-in assumes (6 x active parameters x tokens per step)",
                    "TFLOPS")
      ->default_str(significant_text(flags.tflops))
      ->group(kComputeGroup);
  add_parsed_option(
      app, "--compute-ms", flags.compute_ms,
      [](const std::string& text) { return std::optional(non_negative_number("--compute-ms")(text)); },
      "Forward + backward milliseconds of one layer per micro-batch, instead of --tflops (0: no compute)", "MS")
      ->group(kComputeGroup);
  add_parsed_option(app, "--compute-scale", flags.compute_scale, non_negative_number("--compute-scale"),
                    "Multiply every compute time: 0.5 asks what GPUs twice as fast would see", "FACTOR")
      ->default_str(significant_text(flags.compute_scale))
      ->group(kComputeGroup);
}

}  // namespace

void add_pattern_flags(CLI::App& app, PatternFlags& flags) {
  add_model_flags(app, flags);
  add_layout_flags(app, flags);
  add_framework_flags(app, flags);
  add_compute_flags(app, flags);
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

PatternKind kind_of(const PatternFlags& flags, const std::optional<int>& stage, const std::string& file) {
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

ParallelLayout layout_of(const PatternFlags& flags, PatternKind kind, const ModelShape& model, int world_ranks,
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
void apply_framework_settings(const PatternFlags& flags, PatternConfig& config) {
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
void apply_model_parallel_settings(const PatternFlags& flags, PatternConfig& config,
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
PatternConfig schedule_file_config(const PatternFlags& flags, int world_ranks, int ranks_per_node,
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

PatternConfig resolve_pattern_config(const PatternFlags& flags, int world_ranks, int ranks_per_node,
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
