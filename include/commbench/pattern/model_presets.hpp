// Published model shapes, from each model's Hugging Face config.json (docs/patterns.md
// names the files): --preset fills ModelShape with them.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "commbench/pattern/pattern_config.hpp"

namespace commbench {

// "llama-3-8b", "mistral-7b", "llama-3-70b", "llama-4-scout".
std::span<const std::string_view> model_preset_names();
// The preset's shape (sequence and micro-batch included); UsageError naming `flag` and
// listing the presets when unknown.
ModelShape model_preset(std::string_view name, std::string_view flag);

}  // namespace commbench
