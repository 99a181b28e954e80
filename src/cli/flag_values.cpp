#include "commbench/cli/flag_values.hpp"

#include <cmath>
#include <stdexcept>

#include "commbench/core/error.hpp"

namespace commbench {

std::uint64_t parse_count(const std::string& text, const char* flag, std::uint64_t minimum) {
  std::size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size())
    throw UsageError(std::string(flag) + ": '" + text + "' is not a whole number");
  if (value < static_cast<long long>(minimum))
    throw UsageError(std::string(flag) + ": must be at least " + std::to_string(minimum) + " (got " + text + ")");
  return static_cast<std::uint64_t>(value);
}

double parse_number(std::string text, const char* flag, bool percent_allowed) {
  bool percent = false;
  if (percent_allowed && !text.empty() && text.back() == '%') {
    text.pop_back();
    percent = true;
  }
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !std::isfinite(value))
    throw UsageError(std::string(flag) + ": '" + text + (percent ? "%" : "") + "' is not a number");
  (void)percent;
  return value;
}

}  // namespace commbench
