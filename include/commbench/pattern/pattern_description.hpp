// A PatternConfig as name/value pairs, for the report's header and the CSV/JSON
// provenance: what was run, under the frameworks' own key names, only the settings the
// pattern reads (no FSDP keys for DDP, no stage-3 keys below stage 3).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "commbench/pattern/pattern_config.hpp"

namespace commbench {

std::vector<std::pair<std::string, std::string>> describe_pattern_config(const PatternConfig& config);

}  // namespace commbench
