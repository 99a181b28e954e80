// A user's DeepSpeed config (ds_config.json) as DeepSpeed reads it
// (deepspeed/runtime/zero/config.py: DeepSpeedZeroConfig, its field aliases and defaults)
// and as the Hugging Face Trainer integration writes it
// (transformers/integrations/deepspeed.py: "auto" values it fills from the model).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "commbench/core/dtype.hpp"
#include "commbench/pattern/framework_settings.hpp"

namespace commbench {

struct DeepSpeedConfig {
  std::optional<int> stage;  // zero_optimization.stage
  ZeroSettings zero;         // DeepSpeed's defaults where the file is silent
  // Top-level keys that also describe the step; absent or "auto" (the Trainer fills those
  // from its own arguments, here the command line's).
  std::optional<int> micro_batch;            // train_micro_batch_size_per_gpu
  std::optional<int> gradient_accumulation;  // gradient_accumulation_steps
  std::optional<long long> train_batch_size;
  std::optional<DataType> dtype;  // bf16.enabled / fp16.enabled
};

// Parses the text of a ds_config.json named `label` in messages. "auto" resolves as the
// Trainer resolves it from the model's `hidden` size: reduce_bucket_size = hidden^2 and,
// for stage 3, stage3_prefetch_bucket_size = 0.9 hidden^2 and
// stage3_param_persistence_threshold = 10 hidden. Keys that are unknown, or known but not
// modelled (offload, quantized weights, MiCS), are listed in `warnings`, as are top-level
// sections that do not change communication. A file that is not a JSON object, a negative
// or fractional size, a key given twice under its two names with different values, a
// stage outside 1..3, both bf16 and fp16 on, or "auto" where the Trainer fills nothing is
// a UsageError naming the key: "LABEL: zero_optimization.reduce_bucket_size: -1 is negative".
DeepSpeedConfig parse_deepspeed_config(std::string_view text, std::string_view label, int hidden,
                                       std::vector<std::string>& warnings);

// read_input_file + parse_deepspeed_config, the label "--deepspeed-config PATH".
DeepSpeedConfig read_deepspeed_config(const std::string& path, int hidden, std::vector<std::string>& warnings);

}  // namespace commbench
