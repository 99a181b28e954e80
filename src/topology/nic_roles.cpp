#include "commbench/topology/nic_roles.hpp"

#include <fmt/format.h>
#include <array>
#include <map>
#include <string_view>
#include <tuple>

namespace commbench {
namespace {

// Interfaces that software creates: they forward other ports' traffic or none at all.
bool virtual_interface_name(const std::string& name) {
  static constexpr std::array<std::string_view, 15> kPrefixes{"lo",   "lxcbr", "br-",     "virbr", "docker",
                                                              "veth", "cni",   "flannel", "cali",  "tun",
                                                              "tap",  "vxlan", "kube-",   "weave", "podman"};
  for (const std::string_view prefix : kPrefixes)
    if (name.rfind(prefix, 0) == 0) return true;
  return false;
}

std::string link_layer_of(const Nic& nic) {
  for (const NicPort& port : nic.ports)
    if (port.active() && !port.link_layer.empty()) return port.link_layer;
  for (const NicPort& port : nic.ports)
    if (!port.link_layer.empty()) return port.link_layer;
  return "link layer unknown";
}

double active_gbit(const Nic& nic) {
  double total = 0;
  for (const NicPort& port : nic.ports) total += port.active() ? port.rate_gbit : 0;
  return total;
}

}  // namespace

std::string_view to_string(NicRole role) {
  switch (role) {
    case NicRole::compute: return "compute";
    case NicRole::other: return "other";
    case NicRole::virtual_interface: return "virtual";
  }
  return "?";
}

std::string nic_kind(const NodeTopology& node, const Nic& nic) {
  std::string kind = link_layer_of(nic);
  if (!nic.rdma) kind += " without RDMA";
  if (nic.pci >= 0 && static_cast<std::size_t>(nic.pci) < node.pci.size()) {
    const PciObject& pci = node.pci[static_cast<std::size_t>(nic.pci)];
    if (pci.vendor != 0) kind += fmt::format(" {:04x}:{:04x}", pci.vendor, pci.device_id);
  }
  return kind;
}

NicRoles nic_roles(const NodeTopology& node) {
  NicRoles roles;
  struct Tally {
    bool rdma = false;
    double gbit = 0;
    int ports = 0;
  };
  std::map<std::string, Tally> kinds;
  for (const Nic& nic : node.nics) {
    roles.kind.push_back(nic_kind(node, nic));
    if (virtual_interface_name(nic.name)) continue;
    Tally& tally = kinds[roles.kind.back()];
    tally.rdma = nic.rdma;
    tally.gbit += active_gbit(nic);
    tally.ports += static_cast<int>(nic.ports.size());
  }
  // RDMA first: NCCL's IB/RoCE transport is chosen over sockets whenever a device exists.
  const auto rank = [](const Tally& t) { return std::make_tuple(t.rdma, t.gbit, t.ports); };
  for (const auto& [kind, tally] : kinds) {
    if (roles.compute_kind.empty() || rank(tally) > rank(kinds[roles.compute_kind])) roles.compute_kind = kind;
  }
  for (std::size_t n = 0; n < node.nics.size(); ++n) {
    if (virtual_interface_name(node.nics[n].name)) {
      roles.role.push_back(NicRole::virtual_interface);
    } else {
      roles.role.push_back(roles.kind[n] == roles.compute_kind ? NicRole::compute : NicRole::other);
    }
  }
  return roles;
}

std::vector<std::string> describe_non_compute_nics(const NodeTopology& node, const NicRoles& roles) {
  std::vector<std::string> lines;
  for (std::size_t n = 0; n < node.nics.size(); ++n) {
    const std::string& name = node.nics[n].name;
    if (roles.role[n] == NicRole::virtual_interface) {
      lines.push_back(name + ": a virtual interface (bridge or container network), not used between nodes");
    } else if (roles.role[n] == NicRole::other) {
      lines.push_back(
          fmt::format("{}: {}, not the compute fabric ({}): not used between nodes, not compared with "
                      "compute ports",
                      name, roles.kind[n], roles.compute_kind));
    }
  }
  return lines;
}

}  // namespace commbench
