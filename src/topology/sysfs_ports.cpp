#include "commbench/topology/sysfs_ports.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <tuple>

#include "commbench/core/error.hpp"
#include "commbench/core/launcher_env.hpp"
#include "commbench/topology/sysfs_file.hpp"

namespace commbench {
namespace {

// Ports: the kernel always writes rate, state and phys_state; one it refuses to read is
// reported as unknown rather than failing the probe.
PortState state_or_unknown(const std::filesystem::path& file) {
  const auto text = read_sysfs_attribute(file);
  return text ? parse_port_state(*text, file.string()) : PortState{0, ""};
}

}  // namespace

PortRate parse_port_rate(const std::string& text, const std::string& where) {
  static const std::regex kRate(R"(^([0-9]{1,6}(\.[0-9]{1,4})?) Gb/sec( \(([0-9]{1,2})X ([A-Z0-9]{2,8})\))?$)");
  const std::string value = trimmed(text);
  std::smatch m;
  if (!std::regex_match(value, m, kRate))
    throw UsageError(where + ": '" + excerpt(value) + "' is not a port rate (expected e.g. '200 Gb/sec (4X HDR)')");
  PortRate rate;
  rate.gbit = std::stod(m[1].str());
  if (m[3].matched) {
    rate.lanes = std::stoi(m[4].str());
    rate.speed = m[5].str();
  }
  if (!(rate.gbit > 0) || (m[3].matched && rate.lanes == 0))
    throw UsageError(where + ": '" + excerpt(value) + "' is not a port rate (zero)");
  return rate;
}

PortState parse_port_state(const std::string& text, const std::string& where) {
  const std::string value = trimmed(text);
  const auto colon = value.find(':');
  const auto code = colon == std::string::npos ? std::nullopt : parse_non_negative_int(value.substr(0, colon).c_str());
  const std::string name = colon == std::string::npos ? "" : trimmed(value.substr(colon + 1));
  // Names are the kernel's own words and may hold spaces and brackets ("7: Phy Test",
  // "0: <unknown>"); anything unprintable means the file is not a state at all.
  if (!code || *code > 99 || name.empty() || name.size() > 64 ||
      !std::all_of(name.begin(), name.end(), [](char c) { return c >= 0x20 && c < 0x7f; }))
    throw UsageError(where + ": '" + excerpt(value) + "' is not a port state (expected e.g. '4: ACTIVE')");
  return PortState{*code, name};
}

std::vector<SysfsPort> read_sysfs_ports(const std::string& sysfs_root) {
  namespace fs = std::filesystem;
  std::vector<SysfsPort> ports;
  for (const fs::path& device : list_sysfs_directory(fs::path(sysfs_root) / "class" / "infiniband")) {
    for (const fs::path& port : list_sysfs_directory(device / "ports")) {
      const auto number = parse_non_negative_int(port.filename().c_str());
      if (!number) throw UsageError(port.string() + ": port directory is not a number");
      SysfsPort p;
      p.device = device.filename().string();
      p.port = *number;
      if (const auto rate = read_sysfs_attribute(port / "rate"))
        p.rate = parse_port_rate(*rate, (port / "rate").string());
      p.state = state_or_unknown(port / "state");
      p.physical_state = state_or_unknown(port / "phys_state");
      // The kernel prints "Unknown" for a port whose driver does not say; absent means IB
      // (kernels before link_layer existed had nothing else).
      const fs::path layer = port / "link_layer";
      p.link_layer = read_sysfs_attribute(layer).value_or("InfiniBand");
      if (p.link_layer != "InfiniBand" && p.link_layer != "Ethernet" && p.link_layer != "Unknown")
        throw UsageError(layer.string() + ": '" + excerpt(p.link_layer) + "' is not InfiniBand, Ethernet or Unknown");
      p.bandwidth_gbps = p.rate.gbit / 8.0;
      ports.push_back(p);
    }
  }
  std::sort(ports.begin(), ports.end(), [](const SysfsPort& a, const SysfsPort& b) {
    return std::tie(a.device, a.port) < std::tie(b.device, b.port);
  });
  return ports;
}

}  // namespace commbench
