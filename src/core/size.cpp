#include "commbench/core/size.hpp"

#include <cctype>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>

#include "commbench/core/error.hpp"
#include "commbench/core/number_text.hpp"

namespace commbench {
namespace {

std::string quoted(std::string_view flag, std::string_view text, std::string_view why) {
  return std::string(flag) + ": '" + std::string(text) + "' " + std::string(why);
}

unsigned shift_for_suffix(char suffix) {
  switch (std::toupper(static_cast<unsigned char>(suffix))) {
    case 'K': return 10;
    case 'M': return 20;
    case 'G': return 30;
    case 'T': return 40;
    default: return 64;  // not a suffix
  }
}

// "1.5M": sizes are whole numbers of bytes or units; where the fraction is a whole number
// of the next smaller unit, say how to write it ("write 1536K").
std::string fraction_message(std::string_view flag, std::string_view text, std::uint64_t whole,
                             std::string_view after_point) {
  std::size_t digits = 0;
  std::uint64_t numerator = 0, denominator = 1;
  while (digits < after_point.size() && digits < 6 && std::isdigit(static_cast<unsigned char>(after_point[digits]))) {
    numerator = numerator * 10 + static_cast<std::uint64_t>(after_point[digits] - '0');
    denominator *= 10;
    ++digits;
  }
  const std::string_view unit = after_point.substr(digits);
  const unsigned shift = unit.empty() ? 64 : shift_for_suffix(unit.front());
  static constexpr const char* kSmaller[] = {"", "K", "M", "G"};
  if (digits > 0 && shift != 64 && whole < (std::uint64_t{1} << 40) && (numerator << 10) % denominator == 0) {
    const std::uint64_t in_smaller = (whole << 10) + (numerator << 10) / denominator;
    return quoted(flag, text,
                  fmt::format("has a fraction; sizes are whole numbers of bytes or units: write {}{}", in_smaller,
                              kSmaller[shift / 10 - 1]));
  }
  return quoted(flag, text, "has a fraction; sizes are whole numbers of bytes or units (K, M, G, T)");
}

}  // namespace

std::uint64_t parse_size(std::string_view text, std::string_view flag) {
  std::string_view trimmed = text;
  while (!trimmed.empty() && std::isspace(static_cast<unsigned char>(trimmed.front()))) trimmed.remove_prefix(1);
  while (!trimmed.empty() && std::isspace(static_cast<unsigned char>(trimmed.back()))) trimmed.remove_suffix(1);
  if (trimmed.empty()) throw UsageError(quoted(flag, text, "is empty; expected a size such as 8, 64K, 1M or 2G"));
  if (trimmed.front() == '-') throw UsageError(quoted(flag, text, "is negative; sizes must be at least 1 byte"));

  std::size_t digits = 0;
  std::uint64_t value = 0;
  while (digits < trimmed.size() && std::isdigit(static_cast<unsigned char>(trimmed[digits]))) {
    const std::uint64_t d = static_cast<std::uint64_t>(trimmed[digits] - '0');
    if (value > (std::numeric_limits<std::uint64_t>::max() - d) / 10)
      throw UsageError(quoted(flag, text, "is too large"));
    value = value * 10 + d;
    ++digits;
  }
  if (digits == 0) throw UsageError(quoted(flag, text, "is not a size; expected a size such as 8, 64K, 1M or 2G"));

  std::string_view rest = trimmed.substr(digits);
  if (!rest.empty() && (rest.front() == '.' || rest.front() == ','))
    throw UsageError(fraction_message(flag, text, value, rest.substr(1)));
  unsigned shift = 0;
  if (!rest.empty() && shift_for_suffix(rest.front()) != 64) {
    shift = shift_for_suffix(rest.front());
    rest.remove_prefix(1);
    if (rest == "iB" || rest == "ib" || rest == "B" || rest == "b") rest = {};
  } else if (rest == "B" || rest == "b") {
    rest = {};
  }
  if (!rest.empty()) throw UsageError(quoted(flag, text, "has an unknown unit; use K, M, G or T (binary: 1K = 1024)"));
  if (value == 0) throw UsageError(quoted(flag, text, "is zero; sizes must be at least 1 byte"));
  if (shift > 0 && value > (std::numeric_limits<std::uint64_t>::max() >> shift))
    throw UsageError(quoted(flag, text, "is too large"));
  return value << shift;
}

std::string format_size(std::uint64_t bytes) {
  static constexpr const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  unsigned unit = 0;
  std::uint64_t whole = bytes;
  while (unit < 4 && whole >= 1024 && whole % 1024 == 0) {
    whole /= 1024;
    ++unit;
  }
  if (whole < 1024 || unit == 4) return fmt::format("{}{}", whole, units[unit]);
  // Not a power-of-two multiple: show one decimal in the largest fitting unit.
  double value = static_cast<double>(bytes);
  unit = 0;
  while (unit < 4 && value >= 1024.0) {
    value /= 1024.0;
    ++unit;
  }
  return fixed_text(value, 1) + units[unit];
}

std::vector<std::string> format_sizes_apart(const std::vector<std::uint64_t>& sizes) {
  // "1.0MiB" (a little over 1 MiB) reads as "1MiB" does: both are one reading.
  const auto reading = [](std::string text) {
    const std::size_t point = text.find(".0");
    if (point != std::string::npos) text.erase(point, 2);
    return text;
  };
  std::map<std::string, std::set<std::uint64_t>> sizes_of_reading;
  std::vector<std::string> texts;
  for (const std::uint64_t bytes : sizes) {
    texts.push_back(format_size(bytes));
    sizes_of_reading[reading(texts.back())].insert(bytes);
  }
  for (std::size_t i = 0; i < sizes.size(); ++i)
    if (sizes_of_reading[reading(texts[i])].size() > 1) texts[i] = fmt::format("{}B", sizes[i]);
  return texts;
}

}  // namespace commbench
