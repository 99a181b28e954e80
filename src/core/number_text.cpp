#include "commbench/core/number_text.hpp"

#include <fmt/format.h>

namespace commbench {

std::string significant_text(double value, int digits) { return fmt::format("{:.{}g}", value, digits); }

std::string fixed_text(double value, int decimals) { return fmt::format("{:.{}f}", value, decimals); }

std::string count_text(unsigned long long count, std::string_view noun, std::string_view plural) {
  if (count == 1) return fmt::format("1 {}", noun);
  if (plural.empty()) return fmt::format("{} {}s", count, noun);
  return fmt::format("{} {}", count, plural);
}

std::string fixed_text_within(double value, int decimals, std::size_t width) {
  for (int shown = decimals; shown >= 0; --shown) {
    std::string text = fixed_text(value, shown);
    if (text.size() <= width) return text;
  }
  for (int digits = 3; digits > 0; --digits) {
    std::string text = fmt::format("{:.{}e}", value, digits - 1);
    if (text.size() <= width) return text;
  }
  return fmt::format("{:.0e}", value);
}

}  // namespace commbench
