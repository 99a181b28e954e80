#include "commbench/core/number_text.hpp"

#include <cmath>

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

std::string milliseconds_text(double milliseconds, int digits) {
  const double size = milliseconds < 0 ? -milliseconds : milliseconds;
  if (size >= std::pow(10.0, digits) - 0.5) return fixed_text(milliseconds, 0);
  if (size > 0 && size < 1e-3) return fixed_text(milliseconds, digits);
  return significant_text(milliseconds, digits);
}

std::string duration_text(double seconds) {
  if (!(seconds >= 0) || seconds > 1e12) return "? s";
  // Each unit while its figure, rounded to 3 digits, stays below 1000 (100 for seconds).
  if (seconds < 0.9995e-3) return fmt::format("{} us", fixed_text(seconds * 1e6, seconds < 1e-5 ? 2 : 1));
  if (seconds < 0.9995) return fmt::format("{} ms", significant_text(seconds * 1e3, 3));
  if (seconds < 99.95) return fmt::format("{} s", significant_text(seconds, 3));
  const auto whole = static_cast<long long>(seconds + 0.5);
  if (whole < 3600) return fmt::format("{} min {:02} s", whole / 60, whole % 60);
  const long long minutes = (whole + 30) / 60;
  return fmt::format("{} h {:02} min", minutes / 60, minutes % 60);
}

}  // namespace commbench
