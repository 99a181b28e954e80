#include "commbench/topology/sysfs_nics.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string_view>
#include <utility>

#include "commbench/core/error.hpp"
#include "commbench/core/launcher_env.hpp"
#include "commbench/topology/sysfs_file.hpp"
#include "commbench/topology/sysfs_ports.hpp"

namespace commbench {
namespace {

namespace fs = std::filesystem;

bool looks_like_pci_address(const std::string& name) {
  static const std::regex kPci(R"(^[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$)");
  return std::regex_match(name, kPci);
}

// Only a symlink says where the device sits; a plain `device` directory (hand-made
// fixtures) carries no address.
std::string bus_id_of(const fs::path& device_link, const fs::path& sysfs_root) {
  std::error_code ec;
  if (!fs::is_symlink(fs::symlink_status(device_link, ec))) return "";
  const fs::path target = fs::read_symlink(device_link, ec);
  if (ec) return "";
  const std::string base = target.filename().string();
  if (looks_like_pci_address(base)) return base;
  // virtio-net and friends hang one level below the PCI function that carries them.
  const fs::path resolved =
      fs::weakly_canonical(target.is_absolute() ? target : device_link.parent_path() / target, ec);
  if (ec) return "";
  const fs::path root = fs::weakly_canonical(sysfs_root, ec);
  if (ec) return "";
  const std::string resolved_text = resolved.string();
  const std::string root_text = root.string();
  if (resolved_text.compare(0, root_text.size(), root_text) != 0) return "";
  const fs::path inside = fs::path(resolved_text.substr(root_text.size()));
  std::string nearest;
  for (const auto& part : inside)
    if (looks_like_pci_address(part.string())) nearest = part.string();
  return nearest;
}

int numa_node_of(const fs::path& device_dir) {
  const fs::path file = device_dir / "numa_node";
  const auto text = read_sysfs_attribute(file);
  if (!text || *text == "-1") return -1;
  const auto value = parse_non_negative_int(text->c_str());
  if (!value || *value > 4095)
    throw UsageError(file.string() + ": '" + excerpt(*text) + "' is not a NUMA node (expected e.g. '0' or '-1')");
  return *value;
}

std::vector<std::string> netdevs_of(const fs::path& device_dir) {
  std::vector<std::string> names;
  for (const fs::path& entry : list_sysfs_directory(device_dir / "net")) names.push_back(entry.filename().string());
  return names;
}

NicPort port_from_sysfs(const SysfsPort& p) {
  NicPort port;
  port.port = p.port;
  port.state_code = p.state.code;
  port.state = p.state.name;
  port.physical_state = p.physical_state.name;
  port.link_layer = p.link_layer;
  port.rate_gbit = p.rate.gbit;
  port.lanes = p.rate.lanes;
  port.speed = p.rate.speed;
  return port;
}

NicPort ethernet_port(const fs::path& interface_dir) {
  NicPort port;
  port.port = 1;
  port.link_layer = "Ethernet";

  const fs::path speed_file = interface_dir / "speed";
  if (const auto speed = read_sysfs_attribute(speed_file); speed && *speed != "-1") {
    const auto mbps = parse_non_negative_int(speed->c_str());
    if (!mbps)
      throw UsageError(speed_file.string() + ": '" + excerpt(*speed) +
                       "' is not a link speed (expected Mb/s, e.g. '25000')");
    port.rate_gbit = *mbps / 1000.0;
  }

  // The kernel's RFC 2863 operational states (Documentation/ABI/testing/sysfs-class-net).
  static const std::set<std::string, std::less<>> kOperStates{"unknown", "notpresent", "down", "lowerlayerdown",
                                                              "testing", "dormant",    "up"};
  const fs::path state_file = interface_dir / "operstate";
  const auto state = read_sysfs_attribute(state_file);
  if (state && !kOperStates.contains(*state))
    throw UsageError(state_file.string() + ": '" + excerpt(*state) +
                     "' is not an operstate (expected e.g. 'up' or 'down')");
  if (state && *state == "up") {
    port.state_code = 4;
    port.state = "ACTIVE";
    port.physical_state = "LinkUp";
  } else {
    port.state_code = 1;
    port.state = "DOWN";
  }
  return port;
}

}  // namespace

std::vector<Nic> read_sysfs_nics(const std::string& sysfs_root) {
  const fs::path root(sysfs_root);
  std::vector<Nic> nics;
  std::set<std::string> rdma_netdevs;
  std::error_code ec;

  std::map<std::string, std::vector<NicPort>> ports_by_device;
  for (const SysfsPort& p : read_sysfs_ports(sysfs_root)) ports_by_device[p.device].push_back(port_from_sysfs(p));

  {
    for (const fs::path& entry : list_sysfs_directory(root / "class" / "infiniband")) {
      Nic nic;
      nic.name = entry.filename().string();
      const fs::path device = entry / "device";
      nic.bus_id = bus_id_of(device, root);
      nic.numa = numa_node_of(device);
      nic.netdevs = netdevs_of(device);
      nic.ports = std::move(ports_by_device[nic.name]);
      nic.source = "sysfs";
      rdma_netdevs.insert(nic.netdevs.begin(), nic.netdevs.end());
      nics.push_back(std::move(nic));
    }
  }

  {
    for (const fs::path& entry : list_sysfs_directory(root / "class" / "net")) {
      const std::string name = entry.filename().string();
      const fs::path device = entry / "device";
      // symlink_status: a dangling fixture link still counts as "has a device".
      if (!fs::exists(fs::symlink_status(device, ec)) || rdma_netdevs.contains(name)) continue;
      Nic nic;
      nic.name = name;
      nic.bus_id = bus_id_of(device, root);
      nic.numa = numa_node_of(device);
      nic.netdevs = {name};
      nic.ports = {ethernet_port(entry)};
      nic.source = "sysfs";
      nic.rdma = false;  // a plain interface: listed, but not a NIC NCCL's IB/RoCE transport uses
      nics.push_back(std::move(nic));
    }
  }

  std::sort(nics.begin(), nics.end(), [](const Nic& a, const Nic& b) { return a.name < b.name; });
  return nics;
}

void merge_nics(NodeTopology& node, std::vector<Nic> nics) {
  for (Nic& incoming : nics) {
    const auto existing =
        std::find_if(node.nics.begin(), node.nics.end(), [&](const Nic& nic) { return nic.name == incoming.name; });
    if (existing == node.nics.end()) {
      node.nics.push_back(std::move(incoming));
      continue;
    }
    Nic& nic = *existing;
    if (nic.bus_id.empty()) nic.bus_id = incoming.bus_id;
    if (nic.pci < 0) nic.pci = incoming.pci;
    if (nic.numa < 0) nic.numa = incoming.numa;
    if (nic.cpus.empty()) nic.cpus = std::move(incoming.cpus);
    for (std::string& netdev : incoming.netdevs)
      if (std::find(nic.netdevs.begin(), nic.netdevs.end(), netdev) == nic.netdevs.end())
        nic.netdevs.push_back(std::move(netdev));
    // NCCL's dump lists every usable port as active and says nothing of its state, and an
    // hwloc export has the state but no rate; ports read from the device (libibverbs,
    // sysfs) replace those. Between two sources that do
    // read the device, the first (libibverbs, asked before sysfs) stands.
    const auto reads_port_state = [](const std::string& source) { return source == "ibverbs" || source == "sysfs"; };
    if (nic.ports.empty() ||
        (!reads_port_state(nic.source) && reads_port_state(incoming.source) && !incoming.ports.empty())) {
      nic.ports = std::move(incoming.ports);
    }
  }
}

}  // namespace commbench
