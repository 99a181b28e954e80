// What --profile-range will capture in a bench-collectives run, decided before anything is
// measured: a text that names no case is a usage error (a typo must not capture nothing
// silently), and what cannot be captured here is said as a note.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "commbench/backend/backend.hpp"
#include "commbench/core/op_case.hpp"

namespace commbench {

// Notes for the run's header; throws UsageError naming the flag when `filter` is in no
// case's name.
std::vector<std::string> profile_range_notes(const std::optional<std::string>& filter, std::span<const OpCase> plan,
                                             const Backend& backend);

}  // namespace commbench
