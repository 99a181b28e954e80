#include "commbench/topology/nic_health.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "commbench/topology/sysfs_file.hpp"

namespace commbench {
namespace {

namespace fs = std::filesystem;

constexpr const char* kRdmaErrorCounters[] = {"symbol_error",
                                              "link_downed",
                                              "link_error_recovery",
                                              "port_rcv_errors",
                                              "excessive_buffer_overrun_errors",
                                              "local_link_integrity_errors",
                                              "port_xmit_discards"};

// /proc/net/dev's fields after the name: 8 receive, then 8 transmit.
constexpr std::pair<std::size_t, const char*> kInterfaceErrorFields[] = {
    {2, "rx_errors"}, {3, "rx_dropped"}, {10, "tx_errors"}, {11, "tx_dropped"}, {14, "tx_carrier_errors"}};

std::optional<std::uint64_t> whole_number(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

std::optional<std::string> attribute(const fs::path& file) {
  try {
    return read_sysfs_attribute(file);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::vector<fs::path> listing(const fs::path& directory) {
  try {
    return list_sysfs_directory(directory);
  } catch (const std::exception&) {
    return {};
  }
}

// "4: ACTIVE" -> "ACTIVE"; the kernel's text otherwise.
std::string state_name(const std::string& text) {
  const std::size_t colon = text.find(':');
  return colon == std::string::npos ? text : trimmed(std::string_view(text).substr(colon + 1));
}

void read_rdma_ports(const fs::path& root, std::vector<NicHealthReading>& nics) {
  for (const fs::path& device : listing(root / "class" / "infiniband")) {
    for (const fs::path& port_dir : listing(device / "ports")) {
      const auto port = whole_number(port_dir.filename().string());
      if (!port || *port > 255) continue;
      NicHealthReading reading;
      reading.label = nic_label(device.filename().string(), static_cast<int>(*port), true);
      for (const char* name : kRdmaErrorCounters)
        if (const auto text = attribute(port_dir / "counters" / name))
          if (const auto value = whole_number(*text)) reading.counters[name] = *value;
      reading.state = state_name(attribute(port_dir / "state").value_or(""));
      reading.rate = attribute(port_dir / "rate").value_or("");
      nics.push_back(std::move(reading));
    }
  }
}

void read_interfaces(const std::string& proc_net_dev, std::vector<NicHealthReading>& nics) {
  for (const auto& [name, values] : proc_net_dev_lines(proc_net_dev)) {
    NicHealthReading reading;
    reading.label = name;
    for (const auto& [index, counter] : kInterfaceErrorFields)
      if (index < values.size())
        if (const auto value = whole_number(values[index])) reading.counters[counter] = *value;
    nics.push_back(std::move(reading));
  }
}

void add_counter_changes(const NicHealthReading& before, const NicHealthReading& after,
                         std::vector<std::string>& changes) {
  for (const auto& [name, value] : after.counters) {
    const auto earlier = before.counters.find(name);
    if (earlier == before.counters.end() || earlier->second == value) continue;
    changes.push_back(value > earlier->second ? fmt::format("{} {} +{}", after.label, name, value - earlier->second)
                                              : fmt::format("{} {} reset", after.label, name));
  }
}

}  // namespace

NicHealthSnapshot read_nic_health(const NicCounterSources& sources) {
  NicHealthSnapshot snapshot;
  read_rdma_ports(sources.sysfs_root, snapshot.nics);
  read_interfaces(sources.proc_net_dev, snapshot.nics);
  std::sort(snapshot.nics.begin(), snapshot.nics.end(),
            [](const NicHealthReading& a, const NicHealthReading& b) { return a.label < b.label; });
  return snapshot;
}

std::vector<std::string> nic_health_changes(const NicHealthSnapshot& before, const NicHealthSnapshot& after) {
  std::vector<std::string> changes;
  const auto find = [](const NicHealthSnapshot& snapshot, const std::string& label) -> const NicHealthReading* {
    for (const NicHealthReading& reading : snapshot.nics)
      if (reading.label == label) return &reading;
    return nullptr;
  };
  for (const NicHealthReading& now : after.nics) {
    const NicHealthReading* earlier = find(before, now.label);
    if (!earlier) {
      changes.push_back(now.label + " appeared");
      continue;
    }
    add_counter_changes(*earlier, now, changes);
    if (earlier->state != now.state && !earlier->state.empty() && !now.state.empty())
      changes.push_back(fmt::format("{} state {} -> {}", now.label, earlier->state, now.state));
    if (earlier->rate != now.rate && !earlier->rate.empty() && !now.rate.empty())
      changes.push_back(fmt::format("{} rate {} -> {}", now.label, earlier->rate, now.rate));
  }
  for (const NicHealthReading& then : before.nics)
    if (!find(after, then.label)) changes.push_back(then.label + " disappeared");
  return changes;
}

}  // namespace commbench
