#include "commbench/pattern/tuning_space.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "commbench/core/error.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/pattern/model_tensors.hpp"

namespace commbench {
namespace {

using Texts = std::vector<std::string>;

// How one knob is read, written and which values are tried.
struct KnobDefinition {
  std::string key;
  std::function<std::string(const PatternConfig&)> get;
  std::function<void(PatternConfig&, const std::string&)> set;
  std::function<Texts(const PatternConfig&)> candidates;
};

std::string flag_text(bool value) { return value ? "true" : "false"; }

bool flag_from(const std::string& key, const std::string& text) {
  if (text != "true" && text != "false") throw UsageError(fmt::format("--tune: {}: '{}' is not true or false", key, text));
  return text == "true";
}

double number_from(const std::string& key, const std::string& text) {
  try {
    std::size_t used = 0;
    const double value = std::stod(text, &used);
    if (used == text.size() && std::isfinite(value)) return value;
  } catch (const std::exception&) {
  }
  throw UsageError(fmt::format("--tune: {}: '{}' is not a number", key, text));
}

std::uint64_t elements_from(const std::string& key, const std::string& text) {
  // Digits only: stoull would read "-1" as its largest value.
  const bool digits = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  try {
    if (digits) return std::stoull(text);
  } catch (const std::exception&) {
  }
  throw UsageError(fmt::format("--tune: {}: '{}' is not a whole number of elements", key, text));
}

// Element counts as text, the hidden-size rule DeepSpeed's "auto" applies among them:
// the values a user reaches for first.
Texts element_candidates(std::vector<std::uint64_t> values, std::uint64_t from_hidden) {
  if (from_hidden > 0) values.push_back(from_hidden);
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  Texts texts;
  for (const std::uint64_t value : values) texts.push_back(std::to_string(value));
  return texts;
}

std::uint64_t hidden_squared(const PatternConfig& config, double factor) {
  const double hidden = config.model.hidden;
  return static_cast<std::uint64_t>(factor * hidden * hidden);
}

KnobDefinition zero_elements(std::string name, std::uint64_t ZeroSettings::*field, std::vector<std::uint64_t> values,
                             std::function<std::uint64_t(const PatternConfig&)> from_hidden) {
  const std::string key = "zero_optimization." + name;
  return {key, [field](const PatternConfig& config) { return std::to_string(config.zero.*field); },
          [field, key](PatternConfig& config, const std::string& text) {
            config.zero.*field = elements_from(key, text);
          },
          [values, from_hidden](const PatternConfig& config) {
            return element_candidates(values, from_hidden ? from_hidden(config) : 0);
          }};
}

// A ZeRO flag other than overlap_comm, which DeepSpeed resolves by stage.
KnobDefinition zero_flag(std::string name, bool ZeroSettings::*field) {
  const std::string key = "zero_optimization." + name;
  return {key, [field](const PatternConfig& config) { return flag_text(config.zero.*field); },
          [field, key](PatternConfig& config, const std::string& text) { config.zero.*field = flag_from(key, text); },
          [](const PatternConfig&) { return Texts{"true", "false"}; }};
}

// The model's largest parameter tensor: a persistence threshold at it keeps every
// parameter whole on every rank.
std::uint64_t largest_parameter(const PatternConfig& config) {
  std::uint64_t largest = 0;
  for (const ParameterTensor& tensor : model_tensors(config.model)) largest = std::max(largest, tensor.elements);
  return largest;
}

std::vector<std::uint64_t> with_one(std::vector<std::uint64_t> values) {
  values.insert(values.begin(), 1);
  return values;
}

KnobDefinition overlap_comm() {
  return {"zero_optimization.overlap_comm",
          [](const PatternConfig& config) { return flag_text(config.zero.overlaps(config.zero_stage())); },
          [](PatternConfig& config, const std::string& text) {
            config.zero.overlap_comm = flag_from("zero_optimization.overlap_comm", text);
            config.zero.overlap_comm_set = true;
          },
          [](const PatternConfig&) { return Texts{"true", "false"}; }};
}

// DeepSpeed's defaults and the sizes users move them to, from a few million elements
// (latency begins to show) to the default 5e8.
const std::vector<std::uint64_t> kBucketElements = {5'000'000, 20'000'000, 50'000'000, 200'000'000, 500'000'000};

KnobDefinition fsdp_forward_prefetch() {
  return {"forward_prefetch", [](const PatternConfig& c) { return flag_text(c.fsdp.forward_prefetch); },
          [](PatternConfig& c, const std::string& text) { c.fsdp.forward_prefetch = flag_from("forward_prefetch", text); },
          [](const PatternConfig&) { return Texts{"false", "true"}; }};
}

// Blocks per FSDP unit: one (transformer_auto_wrap_policy, or fully_shard on each block)
// up to four; the whole model as one unit gathers every parameter at once, which no user
// of a model that needs FSDP can afford.
KnobDefinition fsdp_unit_layers() {
  return {"fsdp_unit_layers", [](const PatternConfig& c) { return std::to_string(c.fsdp.layers_per_unit); },
          [](PatternConfig& c, const std::string& text) {
            c.fsdp.layers_per_unit = static_cast<int>(elements_from("fsdp_unit_layers", text));
          },
          [](const PatternConfig& c) {
            Texts units;
            for (const int unit : {1, 2, 4})
              if (unit <= c.model.layers) units.push_back(std::to_string(unit));
            return units;
          }};
}

// The FullyShardedDataParallel wrapper's keyword arguments.
std::vector<KnobDefinition> fsdp1_knobs() {
  return {{"backward_prefetch", [](const PatternConfig& c) { return std::string(name_of(c.fsdp.backward_prefetch)); },
           [](PatternConfig& c, const std::string& text) {
             c.fsdp.backward_prefetch = parse_fsdp_backward_prefetch(text, "--tune: backward_prefetch");
           },
           [](const PatternConfig&) { return Texts{"BACKWARD_PRE", "BACKWARD_POST", "NONE"}; }},
          fsdp_forward_prefetch(),
          {"limit_all_gathers", [](const PatternConfig& c) { return flag_text(c.fsdp.limit_all_gathers); },
           [](PatternConfig& c, const std::string& text) {
             c.fsdp.limit_all_gathers = flag_from("limit_all_gathers", text);
           },
           [](const PatternConfig&) { return Texts{"true", "false"}; }},
          fsdp_unit_layers()};
}

// fully_shard's: it has no backward_prefetch (it always gathers the unit before the one
// whose backward runs, BACKWARD_PRE's order) and no limit_all_gathers; forward prefetch is
// set_modules_to_forward_prefetch with the next unit. reshard_after_forward=False keeps a
// unit gathered from its forward to its backward, SHARD_GRAD_OP's schedule: one all-gather
// of every unit a step fewer, for its parameters' memory. fully_shard takes it on a 2-D
// (hybrid) mesh too, but the model's hybrid sharding always reshards, so hybrid and
// replicated units are not offered the knob; nor is its integer form (resharding to a
// smaller group after forward).
std::vector<KnobDefinition> fsdp2_knobs(const PatternConfig& config) {
  std::vector<KnobDefinition> knobs;
  if (config.fsdp.sharding == FsdpSharding::full_shard || config.fsdp.sharding == FsdpSharding::shard_grad_op)
    knobs.push_back({"reshard_after_forward",
                     [](const PatternConfig& c) { return flag_text(c.fsdp.sharding == FsdpSharding::full_shard); },
                     [](PatternConfig& c, const std::string& text) {
                       c.fsdp.sharding = flag_from("reshard_after_forward", text) ? FsdpSharding::full_shard
                                                                                  : FsdpSharding::shard_grad_op;
                     },
                     [](const PatternConfig&) { return Texts{"true", "false"}; }});
  knobs.push_back(fsdp_forward_prefetch());
  knobs.push_back(fsdp_unit_layers());
  return knobs;
}

std::vector<KnobDefinition> definitions_for(const PatternConfig& config) {
  switch (config.kind) {
    case PatternKind::ddp:
      return {{"bucket_cap_mb", [](const PatternConfig& c) { return significant_text(c.ddp.bucket_cap_mb); },
               [](PatternConfig& c, const std::string& text) {
                 c.ddp.bucket_cap_mb = number_from("bucket_cap_mb", text);
                 c.ddp.bucket_cap_given = true;  // a trial passes it to DDP, which then caps the first bucket so too
                 if (!(c.ddp.bucket_cap_mb > 0)) throw UsageError("--tune: bucket_cap_mb: must be positive");
               },
               [](const PatternConfig&) { return Texts{"1", "5", "10", "25", "50", "100", "250"}; }}};
    case PatternKind::fsdp:
      return config.fsdp.version == 1 ? fsdp1_knobs() : fsdp2_knobs(config);
    case PatternKind::zero1:
    case PatternKind::zero2:
      return {overlap_comm(),
              zero_elements("reduce_bucket_size", &ZeroSettings::reduce_bucket_size, kBucketElements,
                            [](const PatternConfig& c) { return hidden_squared(c, 1.0); }),
              zero_elements("allgather_bucket_size", &ZeroSettings::allgather_bucket_size, kBucketElements, nullptr),
              {"zero_optimization.reduce_scatter",
               [](const PatternConfig& c) { return flag_text(c.zero.reduce_scatter); },
               [](PatternConfig& c, const std::string& text) {
                 c.zero.reduce_scatter = flag_from("zero_optimization.reduce_scatter", text);
               },
               [](const PatternConfig&) { return Texts{"true", "false"}; }}};
    case PatternKind::zero3:
      // The eight knobs users search, over the ranges their searches reach: buckets down to
      // one element (a reduction per gradient), no prefetch, and persistence up to the
      // largest parameter (every parameter whole on every rank: ZeRO-2's parameter memory).
      return {overlap_comm(),
              zero_flag("contiguous_gradients", &ZeroSettings::contiguous_gradients),
              zero_elements("sub_group_size", &ZeroSettings::sub_group_size,
                            {10'000'000, 100'000'000, 1'000'000'000}, nullptr),
              zero_elements("reduce_bucket_size", &ZeroSettings::reduce_bucket_size, with_one(kBucketElements),
                            [](const PatternConfig& c) { return hidden_squared(c, 1.0); }),
              zero_elements("stage3_prefetch_bucket_size", &ZeroSettings::stage3_prefetch_bucket_size,
                            {0, 500'000, 5'000'000, 20'000'000, 50'000'000, 200'000'000},
                            [](const PatternConfig& c) { return hidden_squared(c, 0.9); }),
              zero_elements("stage3_param_persistence_threshold", &ZeroSettings::stage3_param_persistence_threshold,
                            {0, 10'000, 100'000, 1'000'000, 10'000'000}, largest_parameter),
              zero_elements("stage3_max_live_parameters", &ZeroSettings::stage3_max_live_parameters,
                            {100'000'000, 300'000'000, 1'000'000'000, 10'000'000'000}, nullptr),
              zero_elements("stage3_max_reuse_distance", &ZeroSettings::stage3_max_reuse_distance,
                            {0, 100'000'000, 1'000'000'000, 10'000'000'000}, nullptr)};
    default:
      throw UsageError(fmt::format(
          "--tune: --pattern {} has no framework knobs to tune (ddp, fsdp, zero1, zero2 and zero3 have)",
          name_of(config.kind)));
  }
}

const KnobDefinition& definition(const std::vector<KnobDefinition>& definitions, const std::string& key) {
  for (const KnobDefinition& known : definitions)
    if (known.key == key) return known;
  throw UsageError("--tune: '" + key + "' is not a knob of this pattern");
}

}  // namespace

std::vector<TuningKnob> tuning_space(const PatternConfig& config) {
  std::vector<TuningKnob> knobs;
  for (const KnobDefinition& known : definitions_for(config)) {
    TuningKnob knob{known.key, known.candidates(config)};
    // The config's own value is always a candidate: it is where the search starts.
    const std::string own = known.get(config);
    if (std::find(knob.candidates.begin(), knob.candidates.end(), own) == knob.candidates.end())
      knob.candidates.insert(knob.candidates.begin(), own);
    knobs.push_back(std::move(knob));
  }
  return knobs;
}

std::string knob_value(const PatternConfig& config, const std::string& key) {
  return definition(definitions_for(config), key).get(config);
}

PatternConfig with_knob(PatternConfig config, const std::string& key, const std::string& value) {
  definition(definitions_for(config), key).set(config, value);
  validate_pattern_config(config);
  return config;
}

std::string tuned_settings_json(const PatternConfig& config) {
  nlohmann::ordered_json settings = nlohmann::ordered_json::object();
  const auto typed = [](const std::string& text) -> nlohmann::ordered_json {
    if (text == "true" || text == "false") return text == "true";
    const double number = number_from("--tune", text);
    if (number == static_cast<double>(static_cast<std::uint64_t>(number))) return static_cast<std::uint64_t>(number);
    return number;
  };
  const bool zero = config.zero_stage() > 0;
  nlohmann::ordered_json& target = zero ? settings["zero_optimization"] : settings;
  if (zero) target["stage"] = config.zero_stage();
  for (const KnobDefinition& known : definitions_for(config)) {
    // The wrapper's unit is its auto_wrap_policy's choice, not a keyword argument; with
    // fully_shard the file is read by the user's own code, which calls it per unit.
    if (known.key == "fsdp_unit_layers" && config.fsdp.version == 1) continue;
    const std::string value = known.get(config);
    const std::string key = zero ? known.key.substr(std::string("zero_optimization.").size()) : known.key;
    // FSDP's enums are written by member name (BackwardPrefetch[name] reads them back).
    target[key] = known.key == "backward_prefetch" ? nlohmann::ordered_json(value) : typed(value);
  }
  return settings.dump(2) + "\n";
}

std::string tuned_settings_usage(const PatternConfig& config) {
  switch (config.kind) {
    case PatternKind::ddp:
      return "DistributedDataParallel(model, **json.load(file))";
    case PatternKind::fsdp:
      if (config.fsdp.version == 2)
        return "fully_shard([block, ...], reshard_after_forward=...) on each run of fsdp_unit_layers consecutive "
               "blocks, then fully_shard(model); with forward_prefetch, unit.set_modules_to_forward_prefetch([next "
               "unit])";
      return fmt::format(
          "FullyShardedDataParallel(model, **kwargs) with backward_prefetch=BackwardPrefetch[name] (NONE: None), "
          "wrapping {} transformer block{} per unit",
          config.fsdp.layers_per_unit, config.fsdp.layers_per_unit == 1 ? "" : "s");
    default:
      return "merge into ds_config.json (its zero_optimization block)";
  }
}

}  // namespace commbench
