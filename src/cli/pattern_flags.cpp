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
int parse_fsdp_unit(const std::string& text, const char* flag) {
  const std::string lower = detail::lower_case(text);
  if (lower == "layer" || lower == "block") return 1;
  if (lower == "model" || lower == "none") return 0;
  try {
    return whole_at_least(1)(text, flag);
  } catch (const UsageError&) {
    throw UsageError(fmt::format("{}: '{}' is not layer, model or a number of layers", flag, excerpt(text)));
  }
}

}  // namespace


namespace {


// How the ranks are split: tp, pp, dp, ep, micro-batches, interleaving, routing.
void add_layout_flags(CLI::App& app, PatternRequest& flags) {
  add_parsed_option(app, "--tp", flags.tensor, whole_at_least(1),
                    "Tensor-parallel ranks (consecutive ranks, within a node)", "N")
      ->group(kLayoutGroup);
  add_parsed_option(app, "--pp", flags.pipeline, whole_at_least(1), "Pipeline stages", "N")->group(kLayoutGroup);
  add_parsed_option(app, "--dp", flags.data, whole_at_least(1),
                    "Data-parallel ranks; default: the ranks --tp x --pp leave", "N")
      ->group(kLayoutGroup);
  add_parsed_option(app, "--ep", flags.expert, whole_at_least(1),
                    "Expert-parallel ranks, carved out of the data-parallel ones", "N")
      ->group(kLayoutGroup);
  add_parsed_option(app, "--micro-batches,-M", flags.micro_batches, whole_at_least(1),
                    "Pipeline micro-batches per step (M); default --grad-accum, or 2 x --pp", "N")
      ->group(kLayoutGroup);
  add_parsed_option(
      app, "--interleave", flags.interleave,
      whole_at_least(1),
      "Model chunks per pipeline stage: above 1 runs Megatron's interleaved 1F1B", "V")
      ->group(kLayoutGroup);
  app.add_flag("--sequence-parallel", flags.sequence_parallel,
               "Megatron sequence parallelism: reduce-scatter + all-gather instead of tensor-parallel allreduces")
      ->group(kLayoutGroup);
  add_parsed_option(
      app, "--routing", flags.routing, parse_peer_distribution,
      "MoE token routing over the expert group: uniform, zipf:S (skew S) or hot:F (fraction F to one)", "DISTRIBUTION")
      ->group(kLayoutGroup);
}

// The framework's own settings: a ds_config.json, DDP's buckets, FSDP's knobs.
void add_framework_flags(CLI::App& app, PatternRequest& flags) {
  add_parsed_option(
      app, "--schedule", flags.schedule, non_empty_file_name,
      "A step in --dump-schedule's JSON lines (from bench-patterns or bench-replay --dump-schedule) to run, "
      "predict or trace instead of a modelled pattern; --tp/--pp/--ep say the groups",
      "FILE")
      ->group(kFrameworkGroup);
  add_parsed_option(
      app, "--deepspeed-config", flags.deepspeed_config, non_empty_file_name,
      "A DeepSpeed ds_config.json: its zero_optimization block (and micro-batch, accumulation, bf16/fp16)", "FILE")
      ->group(kFrameworkGroup);
  add_parsed_option(
      app, "--bucket-cap-mb", flags.bucket_cap_mb, positive_number,
      "DDP bucket_cap_mb (MiB; default 25)", "MB")
      ->group(kFrameworkGroup);
  add_parsed_option(
      app, "--first-bucket-mb", flags.first_bucket_mb, positive_number,
      "DDP's first bucket cap (MiB; default: 1, or --bucket-cap-mb when that is given, as DDP does)", "MB")
      ->group(kFrameworkGroup);
  add_parsed_option(app, "--broadcast-buffers", flags.broadcast_buffers, parse_zero_or_one,
                    "DDP broadcast_buffers: 0 or 1 (default 1)", "0|1")
      ->group(kFrameworkGroup);
  add_parsed_option(
      app, "--fsdp-sharding", flags.fsdp_sharding, parse_fsdp_sharding,
      "FSDP sharding_strategy: full_shard (default), shard_grad_op, hybrid_shard, no_shard", "NAME")
      ->group(kFrameworkGroup);
  add_parsed_option(app, "--fsdp-unit", flags.fsdp_layers_per_unit, parse_fsdp_unit,
                    "FSDP wrapping unit: layer (each transformer block, default), N blocks, or model (no wrapping)",
                    "UNIT")
      ->group(kFrameworkGroup);
  add_parsed_option(app, "--forward-prefetch", flags.forward_prefetch, parse_zero_or_one,
                    "FSDP forward_prefetch: 0 (default) or 1", "0|1")
      ->group(kFrameworkGroup);
  add_parsed_option(
      app, "--backward-prefetch", flags.backward_prefetch, parse_fsdp_backward_prefetch,
      "FSDP backward_prefetch: backward_pre (default), backward_post or none", "NAME")
      ->group(kFrameworkGroup);
  add_parsed_option(
      app, "--fsdp-version", flags.fsdp_version,
      [](const std::string& text, const char* flag) {
        if (text != "1" && text != "2") throw UsageError(fmt::format("{}: expected 1 or 2 (got {})", flag, text));
        return text == "1" ? 1 : 2;
      },
      "FSDP 2 (fully_shard: each parameter sharded on its first dimension) or 1 (the FullyShardedDataParallel "
      "wrapper: one flat parameter per unit); default 2",
      "1|2")
      ->group(kFrameworkGroup);
  add_parsed_option(app, "--limit-all-gathers", flags.limit_all_gathers, parse_zero_or_one,
                    "FSDP limit_all_gathers: 0 or 1 (default 1)", "0|1")
      ->group(kFrameworkGroup);
}

// The compute stand-in between the collectives.
void add_compute_flags(CLI::App& app, PatternRequest& flags) {
  add_parsed_option(app, "--tflops", flags.tflops, positive_number,
                    "Sustained TFLOP/s per GPU the compute stand-in assumes (6 x active parameters x tokens per step)",
                    "TFLOPS")
      ->default_str(significant_text(flags.tflops))
      ->group(kComputeGroup);
  add_parsed_option(
      app, "--compute-ms", flags.compute_ms, non_negative_number,
      "Forward + backward milliseconds of one layer per micro-batch, instead of --tflops (0: no compute)", "MS")
      ->group(kComputeGroup);
  add_parsed_option(app, "--compute-scale", flags.compute_scale, non_negative_number,
                    "Multiply every compute time: 0.5 asks what GPUs twice as fast would see", "FACTOR")
      ->default_str(significant_text(flags.compute_scale))
      ->group(kComputeGroup);
}

}  // namespace

void add_pattern_flags(CLI::App& app, PatternRequest& flags) {
  add_model_flags(app, flags);
  add_layout_flags(app, flags);
  add_framework_flags(app, flags);
  add_compute_flags(app, flags);
}

}  // namespace commbench
