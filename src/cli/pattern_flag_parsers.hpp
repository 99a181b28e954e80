// What the bench-patterns flag files share (private to src/cli): the parsers that name
// their flag in a one-line message, the --help groups, and the model flags' two halves.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
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

// Parsers of add_parsed_option, each naming the flag it is handed in its message.
inline auto whole_at_least(int minimum) {
  return [minimum](const std::string& text, const char* flag) {
    const std::uint64_t value = parse_count(text, flag, static_cast<std::uint64_t>(minimum));
    if (value > (1u << 30)) throw UsageError(fmt::format("{}: {} is too large", flag, text));
    return static_cast<int>(value);
  };
}

inline double positive_number(const std::string& text, const char* flag) {
  const double value = parse_number(text, flag, false);
  if (!(value > 0)) throw UsageError(fmt::format("{}: must be positive (got {})", flag, text));
  return value;
}

inline double non_negative_number(const std::string& text, const char* flag) {
  const double value = parse_number(text, flag, false);
  if (value < 0) throw UsageError(fmt::format("{}: must not be negative (got {})", flag, text));
  return value;
}

// --pattern, --preset and the model's shape (pattern_model_flags.cpp).
void add_model_flags(CLI::App& app, PatternRequest& flags);

}  // namespace commbench
