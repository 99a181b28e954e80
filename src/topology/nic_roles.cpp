#include "commbench/topology/nic_roles.hpp"

#include <fmt/format.h>
#include <array>
#include <map>
#include <set>
#include <string_view>
#include <tuple>

#include "commbench/topology/pci_path.hpp"

namespace commbench {
namespace {

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

// Where a NIC sits relative to the GPUs: on a GPU's PCIe switch (PIX or PXB), or in no
// GPU's PCI tree at all (no GPU under its host bridge; in NCCL's dump, which records no
// host bridges, under its top-level switch). Both false where a placement is unknown.
struct GpuPlacement {
  bool on_gpu_switch = false;
  bool away_from_gpus = false;
};

GpuPlacement gpu_placement(const NodeTopology& node, const Nic& nic) {
  GpuPlacement placement;
  bool known = nic.pci >= 0 && !node.gpus.empty();
  bool in_gpu_tree = false;
  for (const Gpu& gpu : node.gpus) {
    const PathClass path = pci_path_class(node, nic.pci, gpu.pci);
    known = known && gpu.pci >= 0;
    placement.on_gpu_switch = placement.on_gpu_switch || path == PathClass::pix || path == PathClass::pxb;
    in_gpu_tree = in_gpu_tree || path == PathClass::pix || path == PathClass::pxb || path == PathClass::phb;
  }
  placement.away_from_gpus = known && !in_gpu_tree;
  return placement;
}

// Whether every GPU has a NIC of `kind` on its PCIe switch. NCCL sends each GPU's traffic
// through the NICs nearest it, so only then is a NIC of that kind away from the GPUs never
// used; a GPU without a NIC beside it takes one from its socket.
bool every_gpu_has_a_switch_nic(const NodeTopology& node, const std::vector<std::string>& kinds,
                                const std::string& kind) {
  if (node.gpus.empty()) return false;
  for (const Gpu& gpu : node.gpus) {
    bool found = false;
    for (std::size_t n = 0; n < node.nics.size() && !found; ++n) {
      const PathClass path = pci_path_class(node, node.nics[n].pci, gpu.pci);
      found = kinds[n] == kind && (path == PathClass::pix || path == PathClass::pxb);
    }
    if (!found) return false;
  }
  return true;
}

// Two levels of a PCI address that a flattened tree still shares between devices placed
// together: the bus of the top-level object (what hangs directly under the CPU), and the
// PCI domain. Empty where the source gives no bus id.
enum class AddressLevel { top_bus, domain };

std::string address_at(const NodeTopology& node, int pci, AddressLevel level) {
  std::string bus_id;
  for (std::size_t steps = 0; pci >= 0 && static_cast<std::size_t>(pci) < node.pci.size() && steps <= node.pci.size();
       ++steps) {
    const PciObject& object = node.pci[static_cast<std::size_t>(pci)];
    if (!object.bus_id.empty()) bus_id = object.bus_id;
    pci = object.parent;
  }
  const std::size_t domain_end = bus_id.find(':');
  if (domain_end == std::string::npos) return "";
  if (level == AddressLevel::domain) return bus_id.substr(0, domain_end);
  const std::size_t bus_end = bus_id.find(':', domain_end + 1);
  return bus_end == std::string::npos ? "" : bus_id.substr(0, bus_end);
}

// In a tree with no NIC of the compute kind on a GPU's switch: the NICs of that kind that
// the first telling level of the address sets apart, and why. A level tells where every
// GPU has a NIC of the kind at its address, those NICs are at least one per two GPUs (as
// NCCL's rails are), and some NIC of the kind is at an address with no GPU.
std::vector<std::string> apart_by_address(const NodeTopology& node, const NicRoles& roles) {
  std::vector<std::string> reasons(node.nics.size());
  const auto of_kind = [&](std::size_t n) {
    return roles.kind[n] == roles.compute_kind && !virtual_interface_name(node.nics[n].name);
  };
  for (const AddressLevel level : {AddressLevel::top_bus, AddressLevel::domain}) {
    std::set<std::string> gpu_addresses;
    bool known = !node.gpus.empty();
    for (const Gpu& gpu : node.gpus) {
      const std::string address = address_at(node, gpu.pci, level);
      known = known && !address.empty();
      gpu_addresses.insert(address);
    }
    std::set<std::string> served;
    std::size_t near = 0, away = 0;
    for (std::size_t n = 0; n < node.nics.size(); ++n) {
      const std::string address = of_kind(n) ? address_at(node, node.nics[n].pci, level) : "";
      if (address.empty()) continue;
      const bool beside_gpus = gpu_addresses.count(address) > 0;
      (beside_gpus ? near : away) += 1;
      if (beside_gpus) served.insert(address);
    }
    if (!known || served.size() != gpu_addresses.size() || away == 0 || near * 2 < node.gpus.size()) continue;
    const char* what = level == AddressLevel::top_bus ? "bus" : "domain";
    for (std::size_t n = 0; n < node.nics.size(); ++n) {
      const std::string address = of_kind(n) ? address_at(node, node.nics[n].pci, level) : "";
      if (!address.empty() && gpu_addresses.count(address) == 0)
        reasons[n] = fmt::format("on PCI {} {} with no GPU, while every GPU has a NIC of this kind on its own {}",
                                 what, address, what);
    }
    return reasons;
  }
  return reasons;
}

}  // namespace

std::string nic_card(const Nic& nic) {
  // A card's functions take consecutive node GUIDs of its range (and one function's ports
  // share one): that holds where a VM gives each function a slot of its own.
  if (nic.guid != 0) return fmt::format("guid {:014x}", nic.guid >> 8);
  // "0000:01:00.2": the functions of one card share all but the function number.
  const std::size_t dot = nic.bus_id.rfind('.');
  return dot == std::string::npos ? "" : nic.bus_id.substr(0, dot);
}

bool virtual_interface_name(const std::string& name) {
  static constexpr std::array<std::string_view, 15> kPrefixes{"lo",   "lxcbr", "br-",     "virbr", "docker",
                                                              "veth", "cni",   "flannel", "cali",  "tun",
                                                              "tap",  "vxlan", "kube-",   "weave", "podman"};
  for (const std::string_view prefix : kPrefixes)
    if (name.rfind(prefix, 0) == 0) return true;
  return false;
}

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
    bool on_gpu_switch = false;  // some NIC of the kind shares a PCIe switch with a GPU
    double gbit = 0;
    int ports = 0;
  };
  std::map<std::string, Tally> kinds;
  std::vector<GpuPlacement> placements;
  for (const Nic& nic : node.nics) {
    roles.kind.push_back(nic_kind(node, nic));
    placements.push_back(gpu_placement(node, nic));
    if (virtual_interface_name(nic.name)) continue;
    Tally& tally = kinds[roles.kind.back()];
    tally.rdma = nic.rdma;
    tally.on_gpu_switch = tally.on_gpu_switch || placements.back().on_gpu_switch;
    tally.gbit += active_gbit(nic);
    tally.ports += static_cast<int>(nic.ports.size());
  }
  // RDMA first: NCCL's IB/RoCE transport is chosen over sockets whenever a device exists.
  // Then the kind built into the GPUs' PCIe switches: NCCL sends through the NICs nearest
  // each GPU, so a card unlike those is another network, however fast.
  const auto rank = [](const Tally& t) { return std::make_tuple(t.rdma, t.on_gpu_switch, t.gbit, t.ports); };
  for (const auto& [kind, tally] : kinds) {
    if (roles.compute_kind.empty() || rank(tally) > rank(kinds[roles.compute_kind])) roles.compute_kind = kind;
  }
  // Where every GPU has a compute NIC on its switch, a NIC of the same card with no GPU
  // under its host bridge is a front-end or storage port. Elsewhere (NICs on root ports, as
  // on PCIe servers) a GPU uses a NIC of its socket, so none is set apart.
  const bool fabric_on_gpu_switches =
      !roles.compute_kind.empty() && every_gpu_has_a_switch_nic(node, roles.kind, roles.compute_kind);
  // Where no NIC of the kind shares a switch with a GPU (a VM's flattened tree), the PCI
  // address is the evidence left.
  roles.apart_because = std::vector<std::string>(node.nics.size());
  roles.compared_within_card = std::vector<std::string>(node.nics.size());
  if (!roles.compute_kind.empty() && !kinds[roles.compute_kind].on_gpu_switch) {
    roles.apart_because = apart_by_address(node, roles);
    // The address says only that a port is not compute, not that the ports set apart
    // are alike: a front-end bridge holds cards set up one by one (four 100 GbE ports of
    // one card beside a 200 GbE card), so each is compared within its card.
    for (std::size_t n = 0; n < node.nics.size(); ++n)
      if (!roles.apart_because[n].empty()) roles.compared_within_card[n] = nic_card(node.nics[n]);
  }
  for (std::size_t n = 0; n < node.nics.size(); ++n) {
    if (fabric_on_gpu_switches && placements[n].away_from_gpus && roles.kind[n] == roles.compute_kind)
      roles.apart_because[n] =
          "no GPU under its host bridge or PCIe switch, while every GPU has a NIC of this kind on its own switch";
    if (virtual_interface_name(node.nics[n].name)) {
      roles.role.push_back(NicRole::virtual_interface);
      roles.apart_because[n].clear();
    } else if (roles.kind[n] != roles.compute_kind || !roles.apart_because[n].empty()) {
      roles.role.push_back(NicRole::other);
    } else {
      roles.role.push_back(NicRole::compute);
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
    } else if (roles.role[n] == NicRole::other && roles.kind[n] == roles.compute_kind) {
      lines.push_back(fmt::format("{}: {}, {}: front-end or storage, not used between nodes, not compared with "
                                  "compute ports",
                                  name, roles.kind[n], roles.apart_because[n]));
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
