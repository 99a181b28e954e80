#include "commbench/topology/nic_counters.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "commbench/core/error.hpp"
#include "commbench/topology/sysfs_file.hpp"

namespace commbench {
namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kMax32 = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint64_t kInfinibandUnit = 4;  // port data counters count 4-byte words

std::optional<std::uint64_t> whole_number(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

// A sysfs read that may fail in any way without throwing: the failure becomes `problem`.
std::optional<std::uint64_t> read_counter(const fs::path& file, std::string& problem) {
  std::optional<std::string> text;
  try {
    text = read_sysfs_attribute(file);
  } catch (const std::exception& e) {
    problem = e.what();
    return std::nullopt;
  }
  if (!text) {
    problem = fmt::format("{}: missing", file.string());
    return std::nullopt;
  }
  const auto value = whole_number(*text);
  if (!value || *value > std::numeric_limits<std::uint64_t>::max() / kInfinibandUnit) {
    problem = fmt::format("{}: '{}' is no counter", file.string(), excerpt(*text));
    return std::nullopt;
  }
  return *value * kInfinibandUnit;
}

std::vector<NicCounterReading> read_rdma_ports(const fs::path& root) {
  std::vector<NicCounterReading> readings;
  std::vector<fs::path> devices;
  try {
    devices = list_sysfs_directory(root / "class" / "infiniband");
  } catch (const std::exception&) {
    return readings;  // the interfaces are still read; the ports are unknown
  }
  for (const fs::path& device : devices) {
    std::vector<fs::path> ports;
    try {
      ports = list_sysfs_directory(device / "ports");
    } catch (const std::exception&) {
      continue;
    }
    for (const fs::path& port_dir : ports) {
      const auto port = whole_number(port_dir.filename().string());
      if (!port || *port > 255) continue;
      NicCounterReading reading;
      reading.device = device.filename().string();
      reading.port = static_cast<int>(*port);
      reading.rdma = true;
      std::string tx_problem, rx_problem;
      reading.tx_bytes = read_counter(port_dir / "counters" / "port_xmit_data", tx_problem);
      reading.rx_bytes = read_counter(port_dir / "counters" / "port_rcv_data", rx_problem);
      reading.problem = !tx_problem.empty() ? tx_problem : rx_problem;
      readings.push_back(std::move(reading));
    }
  }
  return readings;
}

std::vector<NicCounterReading> read_interfaces(const std::string& proc_net_dev) {
  std::vector<NicCounterReading> readings;
  for (const auto& [name, values] : proc_net_dev_lines(proc_net_dev)) {
    // Read before the reading is built: filled in place, GCC 12 reports a false
    // -Wmaybe-uninitialized on it.
    const bool complete = values.size() >= 9;
    const std::optional<std::uint64_t> rx_bytes = complete ? whole_number(values[0]) : std::nullopt;
    const std::optional<std::uint64_t> tx_bytes = complete ? whole_number(values[8]) : std::nullopt;
    NicCounterReading reading;
    reading.device = name;
    reading.rx_bytes = rx_bytes;
    reading.tx_bytes = tx_bytes;
    if (!reading.rx_bytes || !reading.tx_bytes)
      reading.problem = fmt::format("{}: the line of {} is not one of byte counters", proc_net_dev, name);
    readings.push_back(std::move(reading));
  }
  std::sort(readings.begin(), readings.end(),
            [](const NicCounterReading& a, const NicCounterReading& b) { return a.device < b.device; });
  return readings;
}

std::string label_of(const NicCounterReading& reading) { return nic_label(reading.device, reading.port, reading.rdma); }

void join_note(std::string& into, const std::string& note) {
  if (note.empty() || into.find(note) != std::string::npos) return;
  into += into.empty() ? note : "; " + note;
}

std::optional<std::uint64_t> change_of(const std::optional<std::uint64_t>& before,
                                       const std::optional<std::uint64_t>& after, bool rdma, std::string& note) {
  if (!before || !after) return std::nullopt;
  std::string this_note;
  const auto change = counter_change(*before, *after, rdma, this_note);
  join_note(note, this_note);
  return change;
}

}  // namespace

std::vector<std::pair<std::string, std::vector<std::string>>> proc_net_dev_lines(const std::string& proc_net_dev) {
  std::vector<std::pair<std::string, std::vector<std::string>>> lines;
  std::ifstream in(proc_net_dev);
  std::string line;
  while (in && std::getline(in, line)) {
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos || line.find('|') != std::string::npos) continue;
    const std::string name = trimmed(std::string_view(line).substr(0, colon));
    if (name.empty() || name == "lo") continue;
    std::istringstream fields(line.substr(colon + 1));
    std::vector<std::string> values;
    for (std::string field; fields >> field;) values.push_back(field);
    lines.emplace_back(name, std::move(values));
  }
  return lines;
}

std::string nic_label(const std::string& device, int port, bool rdma) {
  return rdma ? fmt::format("{}:{}", device, port) : device;
}

NicCounterSnapshot read_nic_counters(const NicCounterSources& sources) {
  NicCounterSnapshot snapshot;
  snapshot.nics = read_rdma_ports(sources.sysfs_root);
  for (NicCounterReading& reading : read_interfaces(sources.proc_net_dev)) snapshot.nics.push_back(std::move(reading));
  return snapshot;
}

std::optional<std::uint64_t> counter_change(std::uint64_t before, std::uint64_t after, bool rdma, std::string& note) {
  if (rdma && after == kMax32 * kInfinibandUnit) {
    note = "its 32-bit counter stopped at its maximum (the adapter has no extended counters)";
    return std::nullopt;
  }
  if (after >= before) return after - before;
  if (!rdma && before <= kMax32 && after <= kMax32) {
    note = "its 32-bit counter wrapped";
    return after + (kMax32 + 1) - before;
  }
  note = "its counter went back (reset during the case)";
  return std::nullopt;
}

std::vector<NicTraffic> nic_traffic(const NicCounterSnapshot& before, const NicCounterSnapshot& after) {
  std::map<std::string, const NicCounterReading*> earlier;
  for (const NicCounterReading& reading : before.nics) earlier[label_of(reading)] = &reading;
  std::vector<NicTraffic> traffic;
  for (const NicCounterReading& reading : after.nics) {
    NicTraffic t;
    t.device = reading.device;
    t.port = reading.port;
    t.rdma = reading.rdma;
    const auto found = earlier.find(label_of(reading));
    if (found == earlier.end()) {
      t.note = "appeared during the case";
      traffic.push_back(std::move(t));
      continue;
    }
    const NicCounterReading& first = *found->second;
    earlier.erase(found);
    join_note(t.note, first.problem);
    join_note(t.note, reading.problem);
    t.tx_bytes = change_of(first.tx_bytes, reading.tx_bytes, reading.rdma, t.note);
    t.rx_bytes = change_of(first.rx_bytes, reading.rx_bytes, reading.rdma, t.note);
    traffic.push_back(std::move(t));
  }
  for (const auto& [label, reading] : earlier) {
    NicTraffic t;
    t.device = reading->device;
    t.port = reading->port;
    t.rdma = reading->rdma;
    t.note = "disappeared during the case";
    traffic.push_back(std::move(t));
  }
  return traffic;
}

}  // namespace commbench
