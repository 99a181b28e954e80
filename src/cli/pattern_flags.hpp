// The flags that describe a training step for bench-patterns: the model (or a preset),
// the framework and its settings (or the user's ds_config.json), the parallel layout and
// the compute stand-in. add_pattern_flags() puts them on a CLI11 app; each value is
// parsed as CLI11 meets it, with the one-line message naming the flag. What the flags say
// is a PatternRequest; resolve_pattern_config() (pattern/pattern_request.hpp) combines it
// with the preset and the DeepSpeed file once the job's rank count is known.
#pragma once

#include <CLI/CLI.hpp>

#include "commbench/pattern/pattern_request.hpp"

namespace commbench {

void add_pattern_flags(CLI::App& app, PatternRequest& flags);

}  // namespace commbench
