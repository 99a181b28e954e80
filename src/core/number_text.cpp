#include "commbench/core/number_text.hpp"

#include <fmt/format.h>

namespace commbench {

std::string significant_text(double value, int digits) { return fmt::format("{:.{}g}", value, digits); }

std::string fixed_text(double value, int decimals) { return fmt::format("{:.{}f}", value, decimals); }

}  // namespace commbench
