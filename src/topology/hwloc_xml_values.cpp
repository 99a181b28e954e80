// What an hwloc XML export's values must look like before hwloc reads them. Apart from
// the probe because it works on our parse of the document, not on hwloc's objects.
#include "hwloc_xml_values.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string_view>

#include <fmt/format.h>

#include "commbench/core/error.hpp"
#include "commbench/core/pci_bus_id.hpp"
#include "commbench/topology/link_spec.hpp"

namespace commbench {
namespace {

bool is_hex(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

bool is_decimal(std::string_view text) {
  return !text.empty() && text.size() <= 10 &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool is_pci_bus_id(std::string_view text) { return canonical_pci_bus_id(text, PciBusIdSyntax::full).has_value(); }

// hwloc's bitmap text: comma-separated 32-bit words "0x0000ffff", most significant
// first, an empty word for zero, and "0xf...f" first for an infinite set.
bool is_hwloc_bitmap(std::string_view text) {
  bool infinite = false;  // after "0xf...f," even the first word may be empty (zero)
  if (text.substr(0, 7) == "0xf...f") {
    text.remove_prefix(7);
    if (text.empty()) return true;
    if (text.front() != ',') return false;
    text.remove_prefix(1);
    infinite = true;
  }
  if (text.empty()) return infinite;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view word = text.substr(start, comma - start);
    const bool may_be_empty = start != 0 || infinite;
    if (!(word.empty() && may_be_empty) &&
        !(word.size() >= 3 && word.size() <= 10 && word.substr(0, 2) == "0x" && is_hex(word.substr(2))))
      return false;
    if (comma == text.size()) return true;
    start = comma + 1;
  }
}

bool is_link_speed(std::string_view text) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return !text.empty() && error == std::errc{} && end == text.data() + text.size() && std::isfinite(value) &&
         value >= 0;
}

}  // namespace

// hwloc imports an object with a garbled value by dropping it, or the whole file, without
// saying where; a GPU missing from the probe would then look like a degraded node. The
// values hwloc parses are therefore checked on the document, with the line. PCI classes
// are checked here too: hwloc drops devices it finds unimportant before we could.
void check_hwloc_values(const XmlElement& element, const std::string& path) {
  const std::string where = fmt::format("{}:{}: ", path, element.line);
  const auto check = [&](std::string_view name, bool (*valid)(std::string_view), const char* expected) {
    const std::string* value = element.attribute(name);
    if (value != nullptr && !valid(*value))
      throw UsageError(where + std::string(name) + " '" + excerpt(*value) + "' is not " + expected);
  };
  check("pci_busid", is_pci_bus_id, "a PCI bus id (DDDD:BB:DD.F)");
  for (const char* name :
       {"cpuset", "complete_cpuset", "allowed_cpuset", "nodeset", "complete_nodeset", "allowed_nodeset"})
    check(name, is_hwloc_bitmap, "an hwloc bitmap (0x0000ffff,0x...)");
  check("os_index", is_decimal, "a whole number");
  check("gp_index", is_decimal, "a whole number");
  check("pci_link_speed", is_link_speed, "a link speed in GB/s");

  if (const std::string* type = element.attribute("pci_type")) {
    const std::string* bus = element.attribute("pci_busid");
    const std::string device = where + "PCI device " + (bus ? *bus : std::string("?"));
    unsigned code = 0;
    int used = 0;
    if (type->size() < 4 || std::sscanf(type->substr(0, 4).c_str(), "%4x%n", &code, &used) != 1 || used != 4) {
      throw UsageError(device + " has a malformed pci_type '" + excerpt(*type) + "'");
    }
    if (!known_pci_base_class(code >> 8))
      throw UsageError(fmt::format("{} has unknown PCI class 0x{:04x}", device, code));
  }
  for (const XmlElement& child : element.children) check_hwloc_values(child, path);
}

}  // namespace commbench
