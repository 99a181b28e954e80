#include <fmt/format.h>

#include "command_line_parser.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/pattern/model_presets.hpp"
#include "commbench/pattern/model_tensors.hpp"
#include "pattern_flag_parsers.hpp"

namespace commbench {

namespace {

std::string preset_names() {
  std::string names;
  for (const std::string_view name : model_preset_names()) names += (names.empty() ? "" : ", ") + std::string(name);
  return names;
}

// Past 1e15 a schedule's byte counts (parameters x bytes per element, summed over buckets)
// no longer fit 64 bits; the largest models are a thousand times smaller.
double parse_parameter_count(const std::string& text, const char* flag) {
  constexpr double kMostParameters = 1e15;
  const double parameters = parse_scaled_count(text, flag);
  if (parameters > kMostParameters)
    throw UsageError(
        fmt::format("{}: '{}' is more than 1e15 parameters (byte counts would overflow)", flag, excerpt(text)));
  return parameters;
}

}  // namespace

// --pattern, --preset and the model's shape.
void add_model_flags(CLI::App& app, PatternRequest& flags) {
  add_parsed_option(
      app, "--pattern", flags.pattern, parse_pattern_kind,
      "The framework's step: ddp, fsdp, zero1, zero2, zero3 (data parallel), pipeline, tp, ep (model parallel, "
      "gradients reduced as DDP does); default ddp, or the ZeRO stage of --deepspeed-config",
      "NAME")
      ->group(kFrameworkGroup);
  add_parsed_option(
      app, "--preset", flags.preset,
      [](const std::string& text, const char* flag) {
        model_preset(text, flag);  // rejects an unknown name while parsing
        return text;
      },
      "A published model shape: " + preset_names() + "; the model flags override its values", "NAME")
      ->group(kModelGroup);
  add_parsed_option(
      app, "--params", flags.parameters, parse_parameter_count,
      "Total parameters, e.g. 8e9 or 8B (what the layers do not hold is the embedding and head)", "COUNT")
      ->group(kModelGroup);
  add_parsed_option(app, "--layers", flags.layers, whole_at_least(1), "Transformer blocks", "N")
      ->group(kModelGroup);
  add_parsed_option(app, "--hidden", flags.hidden, whole_at_least(1), "Hidden size", "N")->group(kModelGroup);
  add_parsed_option(app, "--ffn", flags.ffn, whole_at_least(1),
                    "Feed-forward inner size (per expert with --experts); default 4 x hidden", "N")
      ->group(kModelGroup);
  add_parsed_option(app, "--seq", flags.sequence, whole_at_least(1), "Tokens per sample", "N")->group(kModelGroup);
  add_parsed_option(app, "--micro-batch", flags.micro_batch, whole_at_least(1),
                    "Samples per micro-batch per data-parallel rank (train_micro_batch_size_per_gpu)", "N")
      ->group(kModelGroup);
  add_parsed_option(app, "--grad-accum", flags.gradient_accumulation, whole_at_least(1),
                    "Gradient accumulation steps (micro-batches per step)", "N")
      ->group(kModelGroup);
  add_parsed_option(
      app, "--dtype", flags.dtype, parse_data_type,
      "Parameter and gradient type; default bfloat16", "TYPE")
      ->group(kModelGroup);
  add_parsed_option(app, "--experts", flags.experts, whole_at_least(1),
                    "Routed experts per MoE layer (1: dense)", "N")
      ->group(kModelGroup);
  add_parsed_option(app, "--top-k", flags.top_k, whole_at_least(1), "Experts each token is routed to", "N")
      ->group(kModelGroup);
  add_parsed_option(app, "--vocab", flags.vocabulary, whole_at_least(1),
                    "Vocabulary size: the embedding and output head are vocab x hidden (instead of what --params "
                    "leaves)",
                    "N")
      ->group(kModelGroup);
  add_parsed_option(app, "--heads", flags.attention_heads, whole_at_least(1),
                    "Attention heads (with --kv-heads: the k and v projections' size)", "N")
      ->group(kModelGroup);
  add_parsed_option(app, "--kv-heads", flags.kv_heads, whole_at_least(1),
                    "Key/value heads of grouped-query attention; default as many as --heads", "N")
      ->group(kModelGroup);
  app.add_flag("--tie-embeddings", flags.tie_embeddings, "The output head shares the embedding's weight (no lm_head)")
      ->group(kModelGroup);
}

}  // namespace commbench
