#include "commbench/core/pci_bus_id.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <vector>

#include <fmt/format.h>

namespace commbench {

std::optional<std::string> canonical_pci_bus_id(std::string_view text, PciBusIdSyntax syntax) {
  const auto is_hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  const auto hex_run = [&](std::string_view run, std::size_t min, std::size_t max) {
    return run.size() >= min && run.size() <= max && std::all_of(run.begin(), run.end(), is_hex);
  };
  text = text.substr(0, std::min(text.find('\0'), text.size()));
  const auto dot = text.rfind('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const std::string_view function = text.substr(dot + 1);
  text = text.substr(0, dot);
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    const auto colon = text.find(':', start);
    parts.push_back(text.substr(start, colon == std::string_view::npos ? std::string_view::npos : colon - start));
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  const bool full = syntax == PciBusIdSyntax::full;
  if (parts.size() == 2 && !full) parts.insert(parts.begin(), std::string_view("0"));
  const std::size_t shortest = full ? 2 : 1;
  if (parts.size() != 3 || !hex_run(parts[0], full ? 4 : 1, 8) || !hex_run(parts[1], shortest, 2) ||
      !hex_run(parts[2], shortest, 2) || function.size() != 1 || function[0] < '0' || function[0] > '7')
    return std::nullopt;
  const auto value = [](std::string_view hex) { return std::strtoul(std::string(hex).c_str(), nullptr, 16); };
  return fmt::format("{:04x}:{:02x}:{:02x}.{}", value(parts[0]), value(parts[1]), value(parts[2]), function[0]);
}

}  // namespace commbench
