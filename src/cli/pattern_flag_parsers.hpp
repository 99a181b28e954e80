// What the bench-patterns flag files share (private to src/cli): the parsers that name
// their flag in a one-line message, the --help groups, and the model flags' two halves.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "commbench/cli/flag_values.hpp"
#include "commbench/core/error.hpp"
#include "pattern_flags.hpp"

namespace commbench {

inline const std::string kModelGroup = "Model";
inline const std::string kLayoutGroup = "Parallel layout";
inline const std::string kFrameworkGroup = "Framework settings";
inline const std::string kComputeGroup = "Compute stand-in";

// Flag parsers, each naming its flag in its message.
inline auto whole_at_least(const char* flag, int minimum) {
  return [flag, minimum](const std::string& text) {
    const std::uint64_t value = parse_count(text, flag, static_cast<std::uint64_t>(minimum));
    if (value > (1u << 30)) throw UsageError(fmt::format("{}: {} is too large", flag, text));
    return std::optional<int>(static_cast<int>(value));
  };
}

inline auto positive_number(const char* flag) {
  return [flag](const std::string& text) {
    const double value = parse_number(text, flag, false);
    if (!(value > 0)) throw UsageError(fmt::format("{}: must be positive (got {})", flag, text));
    return value;
  };
}

inline auto non_negative_number(const char* flag) {
  return [flag](const std::string& text) {
    const double value = parse_number(text, flag, false);
    if (value < 0) throw UsageError(fmt::format("{}: must not be negative (got {})", flag, text));
    return value;
  };
}

inline auto zero_or_one(const char* flag) {
  return [flag](const std::string& text) { return std::optional<bool>(parse_zero_or_one(text, flag)); };
}

// --pattern, --preset and the model's shape (pattern_model_flags.cpp).
void add_model_flags(CLI::App& app, PatternRequest& flags);

}  // namespace commbench
