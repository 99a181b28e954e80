#include "commbench/topology/sysfs_ports.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <cctype>
#include <sstream>
#include <tuple>

#include "commbench/core/error.hpp"
#include "commbench/core/launcher_env.hpp"

namespace commbench {
namespace {

std::string trimmed(std::string text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

std::string read_small_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw UsageError(path.string() + ": cannot read");
  std::string text(4096, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return trimmed(text);
}

}  // namespace

PortRate parse_port_rate(const std::string& text, const std::string& where) {
  static const std::regex kRate(R"(^([0-9]{1,6}(\.[0-9]{1,4})?) Gb/sec( \(([0-9]{1,2})X ([A-Z0-9]{2,8})\))?$)");
  const std::string value = trimmed(text);
  std::smatch m;
  if (!std::regex_match(value, m, kRate))
    throw UsageError(where + ": '" + value + "' is not a port rate (expected e.g. '200 Gb/sec (4X HDR)')");
  PortRate rate;
  rate.gbit = std::stod(m[1].str());
  if (m[3].matched) {
    rate.lanes = std::stoi(m[4].str());
    rate.speed = m[5].str();
  }
  if (!(rate.gbit > 0) || (m[3].matched && rate.lanes == 0))
    throw UsageError(where + ": '" + value + "' is not a port rate (zero)");
  return rate;
}

PortState parse_port_state(const std::string& text, const std::string& where) {
  const std::string value = trimmed(text);
  const auto colon = value.find(':');
  const auto code = colon == std::string::npos ? std::nullopt : parse_non_negative_int(value.substr(0, colon).c_str());
  const std::string name = colon == std::string::npos ? "" : trimmed(value.substr(colon + 1));
  if (!code || *code > 99 || name.empty() ||
      !std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }))
    throw UsageError(where + ": '" + value + "' is not a port state (expected e.g. '4: ACTIVE')");
  return PortState{*code, name};
}

std::vector<SysfsPort> read_sysfs_ports(const std::string& sysfs_root) {
  namespace fs = std::filesystem;
  std::vector<SysfsPort> ports;
  const fs::path devices = fs::path(sysfs_root) / "class" / "infiniband";
  std::error_code ec;
  if (!fs::is_directory(devices, ec)) return ports;
  for (const auto& device : fs::directory_iterator(devices, ec)) {
    const fs::path port_dir = device.path() / "ports";
    if (!fs::is_directory(port_dir, ec)) continue;
    for (const auto& port : fs::directory_iterator(port_dir, ec)) {
      const auto number = parse_non_negative_int(port.path().filename().c_str());
      if (!number) throw UsageError(port.path().string() + ": port directory is not a number");
      SysfsPort p;
      p.device = device.path().filename().string();
      p.port = *number;
      p.rate = parse_port_rate(read_small_file(port.path() / "rate"), (port.path() / "rate").string());
      p.state = parse_port_state(read_small_file(port.path() / "state"), (port.path() / "state").string());
      p.physical_state =
          parse_port_state(read_small_file(port.path() / "phys_state"), (port.path() / "phys_state").string());
      const fs::path layer = port.path() / "link_layer";
      p.link_layer = fs::exists(layer, ec) ? read_small_file(layer) : "InfiniBand";
      if (p.link_layer != "InfiniBand" && p.link_layer != "Ethernet")
        throw UsageError(layer.string() + ": '" + p.link_layer + "' is neither InfiniBand nor Ethernet");
      p.bandwidth_gbps = p.rate.gbit / 8.0;
      ports.push_back(p);
    }
  }
  std::sort(ports.begin(), ports.end(),
            [](const SysfsPort& a, const SysfsPort& b) { return std::tie(a.device, a.port) < std::tie(b.device, b.port); });
  return ports;
}

}  // namespace commbench
