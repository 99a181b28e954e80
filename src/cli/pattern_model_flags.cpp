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
double parse_parameter_count(const std::string& text) {
  constexpr double kMostParameters = 1e15;
  const double parameters = parse_scaled_count(text, "--params");
  if (parameters > kMostParameters)
    throw UsageError("--params: '" + excerpt(text) + "' is more than 1e15 parameters (byte counts would overflow)");
  return parameters;
}

}  // namespace

// --pattern, --preset and the model's shape.
void add_model_flags(CLI::App& app, PatternFlags& flags) {
  add_parsed_option(
      app, "--pattern", flags.pattern,
      [](const std::string& text) { return std::optional(parse_pattern_kind(text, "--pattern")); },
      "The framework's step: ddp, fsdp, zero1, zero2, zero3 (data parallel), pipeline, tp, ep (model parallel, "
      "gradients reduced as DDP does); default ddp, or the ZeRO stage of --deepspeed-config",
      "NAME")
      ->group(kFrameworkGroup);
  add_parsed_option(
      app, "--preset", flags.preset,
      [](const std::string& text) {
        model_preset(text, "--preset");  // rejects an unknown name while parsing
        return text;
      },
      "A published model shape: " + preset_names() + "; the model flags override its values", "NAME")
      ->group(kModelGroup);
  add_parsed_option(
      app, "--params", flags.parameters,
      [](const std::string& text) { return std::optional(parse_parameter_count(text)); },
      "Total parameters, e.g. 8e9 or 8B (what the layers do not hold is the embedding and head)", "COUNT")
      ->group(kModelGroup);
  add_parsed_option(app, "--layers", flags.layers, whole_at_least("--layers", 1), "Transformer blocks", "N")
      ->group(kModelGroup);
  add_parsed_option(app, "--hidden", flags.hidden, whole_at_least("--hidden", 1), "Hidden size", "N")->group(kModelGroup);
  add_parsed_option(app, "--ffn", flags.ffn, whole_at_least("--ffn", 1),
                    "Feed-forward inner size (per expert with --experts); default 4 x hidden", "N")
      ->group(kModelGroup);
  add_parsed_option(app, "--seq", flags.sequence, whole_at_least("--seq", 1), "Tokens per sample", "N")->group(kModelGroup);
  add_parsed_option(app, "--micro-batch", flags.micro_batch, whole_at_least("--micro-batch", 1),
                    "Samples per micro-batch per data-parallel rank (train_micro_batch_size_per_gpu)", "N")
      ->group(kModelGroup);
  add_parsed_option(app, "--grad-accum", flags.gradient_accumulation, whole_at_least("--grad-accum", 1),
                    "Gradient accumulation steps (micro-batches per step)", "N")
      ->group(kModelGroup);
  add_parsed_option(
      app, "--dtype", flags.dtype,
      [](const std::string& text) { return std::optional(parse_data_type(text, "--dtype")); },
      "Parameter and gradient type; default bfloat16", "TYPE")
      ->group(kModelGroup);
  add_parsed_option(app, "--experts", flags.experts, whole_at_least("--experts", 1),
                    "Routed experts per MoE layer (1: dense)", "N")
      ->group(kModelGroup);
  add_parsed_option(app, "--top-k", flags.top_k, whole_at_least("--top-k", 1), "Experts each token is routed to", "N")
      ->group(kModelGroup);
  add_parsed_option(app, "--vocab", flags.vocabulary, whole_at_least("--vocab", 1),
                    "Vocabulary size: the embedding and output head are vocab x hidden (instead of what --params "
                    "leaves)",
                    "N")
      ->group(kModelGroup);
  add_parsed_option(app, "--heads", flags.attention_heads, whole_at_least("--heads", 1),
                    "Attention heads (with --kv-heads: the k and v projections' size)", "N")
      ->group(kModelGroup);
  add_parsed_option(app, "--kv-heads", flags.kv_heads, whole_at_least("--kv-heads", 1),
                    "Key/value heads of grouped-query attention; default as many as --heads", "N")
      ->group(kModelGroup);
  app.add_flag("--tie-embeddings", flags.tie_embeddings, "The output head shares the embedding's weight (no lm_head)")
      ->group(kModelGroup);
}

namespace {

// --vocab, --heads, --kv-heads and --tie-embeddings on the model: each checked against
// the shape it lands on.
void apply_vocabulary_and_heads(const PatternFlags& flags, ModelShape& model) {
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

ModelShape model_of(const PatternFlags& flags) {
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

}  // namespace commbench
