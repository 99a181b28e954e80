#include "commbench/pattern/deepspeed_config.hpp"

#include <array>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commbench/core/error.hpp"
#include "commbench/core/input_file.hpp"

namespace commbench {
namespace {

// Ordered: warnings and errors follow the file's order of keys.
using Json = nlohmann::ordered_json;

// Keys DeepSpeed accepts that do not change the step's communication.
constexpr std::array<std::string_view, 15> kNoCommunicationKeys = {"stage3_gather_16bit_weights_on_model_save",
                                                                   "stage3_gather_fp16_weights_on_model_save",
                                                                   "gather_16bit_weights_on_model_save",
                                                                   "elastic_checkpoint",
                                                                   "load_from_fp32_weights",
                                                                   "ignore_unused_parameters",
                                                                   "round_robin_gradients",
                                                                   "legacy_stage1",
                                                                   "memory_efficient_linear",
                                                                   "pipeline_loading_checkpoint",
                                                                   "override_module_apply",
                                                                   "log_trace_cache_warnings",
                                                                   "cpu_offload_use_pin_memory",
                                                                   "module_granularity_threshold",
                                                                   "stage3_module_granularity_threshold"};

// Keys that change communication in ways the schedules do not model.
constexpr std::array<std::string_view, 12> kUnmodelledKeys = {"offload_optimizer",
                                                              "offload_param",
                                                              "cpu_offload",
                                                              "cpu_offload_param",
                                                              "zero_quantized_weights",
                                                              "zero_quantized_nontrainable_weights",
                                                              "zero_quantized_gradients",
                                                              "zeropp_loco_param",
                                                              "mics_shard_size",
                                                              "mics_hierarchical_params_gather",
                                                              "use_all_reduce_for_fetch_params",
                                                              "stage3_use_all_reduce_for_fetch_params"};

// Top-level sections that describe the step (read here) or that are DeepSpeed's own and
// change nothing on the wire (listed once as not read).
constexpr std::array<std::string_view, 6> kReadTopLevel = {"zero_optimization",
                                                           "train_micro_batch_size_per_gpu",
                                                           "gradient_accumulation_steps",
                                                           "train_batch_size",
                                                           "bf16",
                                                           "fp16"};

template <std::size_t N>
bool listed(const std::array<std::string_view, N>& keys, std::string_view key) {
  for (const std::string_view known : keys)
    if (known == key) return true;
  return false;
}

bool is_auto(const Json& value) { return value.is_string() && value.get<std::string>() == "auto"; }

// An offload or quantization block that is switched off changes nothing.
bool switched_off(const Json& value) {
  if (value.is_boolean()) return !value.get<bool>();
  if (value.is_null()) return true;
  if (value.is_number()) return value.get<double>() <= 1;  // mics_shard_size -1 / 1: off
  if (value.is_object() && value.contains("device"))
    return value["device"].is_string() && value["device"].get<std::string>() == "none";
  return false;
}

class ZeroBlockReader {
 public:
  ZeroBlockReader(std::string_view label, int hidden, std::vector<std::string>& warnings)
      : label_(label), hidden_(hidden), warnings_(warnings) {}

  // Keys are quoted as the file spells them: escaped, so a warning stays one line.
  void warn(const std::string& warning) { warnings_.push_back(one_line(warning)); }

  [[noreturn]] void fail(std::string_view key, const std::string& problem) const {
    throw UsageError(fmt::format("{}: {}: {}", label_, key, problem));
  }

  // A whole, non-negative number of elements; "auto" gives `automatic` (0: the Trainer
  // fills nothing for this key).
  std::uint64_t count(const std::string& key, const Json& value, std::uint64_t automatic) const {
    if (is_auto(value)) {
      if (automatic > 0) return automatic;
      if (hidden_ <= 0 && (key.find("bucket") != std::string::npos || key.find("persistence") != std::string::npos))
        fail(key, "\"auto\" needs the model's hidden size (--hidden or --preset)");
      fail(key, "\"auto\" is not filled in by the Hugging Face integration for this key");
    }
    if (!value.is_number()) fail(key, fmt::format("expected a number, got {}", excerpt(value.dump())));
    const double number = value.get<double>();
    if (number < 0) fail(key, fmt::format("{} is negative", value.dump()));
    if (number != std::floor(number)) fail(key, fmt::format("{} is not a whole number", value.dump()));
    if (number >= static_cast<double>(std::numeric_limits<std::uint64_t>::max()))
      return std::numeric_limits<std::uint64_t>::max();
    return static_cast<std::uint64_t>(number);
  }

  bool flag(const std::string& key, const Json& value) const {
    if (!value.is_boolean()) fail(key, fmt::format("expected true or false, got {}", excerpt(value.dump())));
    return value.get<bool>();
  }

  void read(const Json& block, DeepSpeedConfig& config) {
    if (!block.is_object()) fail("zero_optimization", "expected an object");
    if (block.contains("stage")) {
      const Json& stage = block["stage"];
      if (!stage.is_number_integer() || stage.get<int>() < 0 || stage.get<int>() > 3)
        fail("zero_optimization.stage", fmt::format("{} is not a ZeRO stage (0..3)", excerpt(stage.dump())));
      if (stage.get<int>() == 0)
        fail("zero_optimization.stage", "0 disables ZeRO (use --pattern ddp for plain data parallelism)");
      config.stage = stage.get<int>();
    }
    const int stage = config.stage.value_or(0);
    const auto hidden = static_cast<std::uint64_t>(std::max(hidden_, 0));
    ZeroSettings& zero = config.zero;
    for (const auto& [key, value] : block.items()) {
      const std::string name = "zero_optimization." + key;
      // DeepSpeed's field names, and the stage3_ aliases the files usually carry.
      const std::string field = key.rfind("stage3_", 0) == 0 ? key.substr(7) : key;
      if (key == "stage") continue;
      if (field == "prefetch_bucket_size" || field == "param_persistence_threshold" ||
          field == "model_persistence_threshold" || field == "max_live_parameters" || field == "max_reuse_distance") {
        const std::string other = key == field ? "stage3_" + key : field;
        if (block.contains(other) && block[other] != value)
          fail(name, fmt::format("contradicts zero_optimization.{} ({} vs {})", other, excerpt(value.dump()),
                                 excerpt(block[other].dump())));
        if (stage != 3 && stage != 0) {
          warn(fmt::format("{}: {}: read by ZeRO stage 3 only, not stage {}", label_, name, stage));
          if (is_auto(value)) continue;
        }
      }
      if (field == "prefetch_bucket_size")
        zero.stage3_prefetch_bucket_size = count(name, value, hidden * hidden * 9 / 10);
      else if (field == "param_persistence_threshold")
        zero.stage3_param_persistence_threshold = count(name, value, 10 * hidden);
      else if (field == "model_persistence_threshold")
        zero.stage3_model_persistence_threshold = count(name, value, 0);
      else if (field == "max_live_parameters")
        zero.stage3_max_live_parameters = count(name, value, 0);
      else if (field == "max_reuse_distance")
        zero.stage3_max_reuse_distance = count(name, value, 0);
      else if (key == "reduce_bucket_size")
        zero.reduce_bucket_size = count(name, value, hidden * hidden);
      else if (key == "allgather_bucket_size")
        zero.allgather_bucket_size = count(name, value, 0);
      else if (key == "sub_group_size")
        zero.sub_group_size = count(name, value, 0);
      else if (key == "zero_hpz_partition_size")
        zero.zero_hpz_partition_size = static_cast<int>(std::min<std::uint64_t>(count(name, value, 0), 1u << 20));
      else if (key == "overlap_comm") {
        zero.overlap_comm = flag(name, value);
        zero.overlap_comm_set = true;
      } else if (key == "contiguous_gradients")
        zero.contiguous_gradients = flag(name, value);
      else if (key == "reduce_scatter")
        zero.reduce_scatter = flag(name, value);
      else if (key == "use_multi_rank_bucket_allreduce")
        zero.use_multi_rank_bucket_allreduce = flag(name, value);
      else if (key == "allgather_partitions") {
        if (!flag(name, value))
          warn(
              fmt::format("{}: {}: false (allreduce of the updated parameters) is not modelled; "
                          "counted as all-gather",
                          label_, name));
      } else if (listed(kNoCommunicationKeys, key)) {
        continue;
      } else if (listed(kUnmodelledKeys, key)) {
        if (!switched_off(value))
          warn(fmt::format("{}: {}: not modelled (the schedule assumes it is off)", label_, name));
      } else {
        warn(fmt::format("{}: {}: unknown key, not read", label_, name));
      }
    }
  }

 private:
  std::string_view label_;
  int hidden_;
  std::vector<std::string>& warnings_;
};

std::optional<int> optional_count(const Json& root, const char* key, std::string_view label) {
  if (!root.contains(key) || is_auto(root[key])) return std::nullopt;
  const Json& value = root[key];
  if (!value.is_number_integer() || value.get<long long>() < 1)
    throw UsageError(fmt::format("{}: {}: {} is not a positive whole number", label, key, excerpt(value.dump())));
  return static_cast<int>(std::min<long long>(value.get<long long>(), 1 << 30));
}

bool enabled(const Json& root, const char* section) {
  if (!root.contains(section) || !root[section].is_object() || !root[section].contains("enabled")) return false;
  const Json& value = root[section]["enabled"];
  return value.is_boolean() && value.get<bool>();
}

}  // namespace

DeepSpeedConfig parse_deepspeed_config(std::string_view text, std::string_view label, int hidden,
                                       std::vector<std::string>& warnings) {
  Json root;
  try {
    root = Json::parse(text);
  } catch (const Json::parse_error& error) {
    throw UsageError(fmt::format("{}: not JSON (byte {})", label, error.byte));
  } catch (const Json::out_of_range&) {
    // The parser's number overflow ("2e816") is not a parse_error.
    throw UsageError(fmt::format("{}: not JSON (a number out of range)", label));
  }
  if (!root.is_object()) throw UsageError(fmt::format("{}: expected a JSON object", label));
  DeepSpeedConfig config;
  ZeroBlockReader reader(label, hidden, warnings);
  if (root.contains("zero_optimization")) reader.read(root["zero_optimization"], config);
  config.micro_batch = optional_count(root, "train_micro_batch_size_per_gpu", label);
  config.gradient_accumulation = optional_count(root, "gradient_accumulation_steps", label);
  if (const std::optional<int> batch = optional_count(root, "train_batch_size", label))
    config.train_batch_size = *batch;
  if (enabled(root, "bf16") && enabled(root, "fp16"))
    throw UsageError(fmt::format("{}: bf16.enabled: contradicts fp16.enabled (both true)", label));
  if (enabled(root, "bf16")) config.dtype = DataType::bfloat16;
  if (enabled(root, "fp16")) config.dtype = DataType::float16;
  std::string not_read;
  for (const auto& [key, value] : root.items())
    if (!listed(kReadTopLevel, key)) not_read += (not_read.empty() ? "" : ", ") + key;
  if (!not_read.empty())
    warnings.push_back(
        one_line(fmt::format("{}: not read (no effect on the step's communication): {}", label, not_read)));
  return config;
}

DeepSpeedConfig read_deepspeed_config(const std::string& path, int hidden, std::vector<std::string>& warnings) {
  const std::string label = "--deepspeed-config " + path;
  return parse_deepspeed_config(read_input_file(path, label), label, hidden, warnings);
}

}  // namespace commbench
