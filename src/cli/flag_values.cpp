#include "commbench/cli/flag_values.hpp"

#include <cmath>
#include <filesystem>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "commbench/core/error.hpp"

namespace commbench {
namespace {

// The number `text` is, all of it; nullopt when it is not one or is not finite.
std::optional<double> whole_number(const std::string& text) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used == 0 || used != text.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

}  // namespace

std::uint64_t parse_count(const std::string& text, const char* flag, std::uint64_t minimum) {
  std::size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size()) throw UsageError(std::string(flag) + ": '" + text + "' is not a whole number");
  if (value < static_cast<long long>(minimum))
    throw UsageError(fmt::format("{}: must be at least {} (got {})", flag, minimum, text));
  return static_cast<std::uint64_t>(value);
}

double parse_number(std::string text, const char* flag, bool percent_allowed) {
  bool percent = false;
  if (percent_allowed && !text.empty() && text.back() == '%') {
    text.pop_back();
    percent = true;
  }
  const std::optional<double> value = whole_number(text);
  if (!value) throw UsageError(std::string(flag) + ": '" + text + (percent ? "%" : "") + "' is not a number");
  return *value;
}

double parse_scaled_count(const std::string& text, const char* flag) {
  std::string number = text;
  double scale = 1;
  if (!number.empty()) {
    switch (number.back()) {
      case 'k':
      case 'K': scale = 1e3; break;
      case 'm':
      case 'M': scale = 1e6; break;
      case 'b':
      case 'B':
      case 'g':
      case 'G': scale = 1e9; break;
      case 't':
      case 'T': scale = 1e12; break;
      default: break;
    }
    if (scale != 1) number.pop_back();
  }
  const std::optional<double> number_value = whole_number(number);
  const double value = number_value.value_or(0) * scale;
  if (!number_value || !std::isfinite(value))
    throw UsageError(std::string(flag) + ": '" + excerpt(text) + "' is not a count (like 8e9 or 8B)");
  if (!(value > 0)) throw UsageError(std::string(flag) + ": must be positive (got " + excerpt(text) + ")");
  return value;
}

double parse_timeout_seconds(const std::string& text, const char* flag) {
  const double seconds = parse_number(text, flag, false);
  constexpr double kYear = 365.0 * 24 * 3600;
  if (seconds < 0 || seconds > kYear)
    throw UsageError(fmt::format("{}: must be 0 (off) or a number of seconds up to a year (got {})", flag, text));
  return seconds;
}

bool parse_zero_or_one(const std::string& text, const char* flag) {
  if (text != "0" && text != "1") throw UsageError(fmt::format("{}: expected 0 or 1 (got {})", flag, text));
  return text == "1";
}

double parse_duration_seconds(const std::string& text, const char* flag) {
  std::string number = text;
  double unit = 1;
  if (!number.empty()) {
    switch (number.back()) {
      case 's': unit = 1; break;
      case 'm': unit = 60; break;
      case 'h': unit = 3600; break;
      case 'd': unit = 24 * 3600; break;
      default: unit = 0; break;
    }
    if (unit != 0) number.pop_back();
    if (unit == 0) unit = 1;
  }
  const std::optional<double> number_value = whole_number(number);
  constexpr double kYear = 365.0 * 24 * 3600;
  const double value = number_value.value_or(0) * unit;
  if (!number_value || !std::isfinite(value))
    throw UsageError(std::string(flag) + ": '" + excerpt(text) + "' is not a length of time (like 90s, 20m, 2h)");
  if (!(value > 0) || value > kYear)
    throw UsageError(std::string(flag) + ": must be more than 0 and at most a year (got " + excerpt(text) + ")");
  return value;
}

bool same_file(const std::string& first, const std::string& second) {
  namespace fs = std::filesystem;
  std::error_code ec;
  // Two names of one file (a link, another spelling) are one file once both exist.
  if (fs::exists(first, ec) && fs::exists(second, ec)) {
    const bool equivalent = fs::equivalent(first, second, ec);
    if (!ec) return equivalent;
  }
  std::error_code first_ec, second_ec;
  // Absolute first: weakly_canonical leaves a relative path that does not exist relative,
  // so "a.csv" and "./a.csv" would differ.
  const fs::path first_resolved = fs::weakly_canonical(fs::absolute(first, first_ec), first_ec);
  const fs::path second_resolved = fs::weakly_canonical(fs::absolute(second, second_ec), second_ec);
  if (first_ec || second_ec) return first == second;
  return first_resolved == second_resolved;
}

void check_distinct_outputs(const std::string& csv_path, const std::string& json_path) {
  check_distinct_paths(csv_path, "--csv", json_path, "--json");
}

void check_distinct_paths(const std::string& first_path, const char* first_flag, const std::string& second_path,
                          const char* second_flag) {
  if (first_path.empty() || second_path.empty()) return;
  if (same_file(first_path, second_path))
    throw UsageError(std::string(second_flag) + ": same file as " + first_flag + " (" + first_path + ")");
}

}  // namespace commbench
