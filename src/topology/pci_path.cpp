#include "commbench/topology/pci_path.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

namespace commbench {
namespace {

// The object itself, then each parent up to its host bridge (or the top of what is known).
std::vector<int> chain_to_root(const NodeTopology& node, int pci) {
  std::vector<int> chain;
  // The bound guards against a cycle in a malformed model: a tree is never deeper than it is large.
  while (pci >= 0 && pci < static_cast<int>(node.pci.size()) && chain.size() <= node.pci.size()) {
    chain.push_back(pci);
    pci = node.pci[static_cast<std::size_t>(pci)].parent;
  }
  return chain;
}

int numa_of_root(const NodeTopology& node, const std::vector<int>& chain) {
  return chain.empty() ? -1 : node.pci[static_cast<std::size_t>(chain.back())].numa;
}

// Bridges strictly between the object (chain[0]) and the common ancestor at chain[position].
int bridges_below(const NodeTopology& node, const std::vector<int>& chain, std::size_t position) {
  int count = 0;
  for (std::size_t i = 1; i < position; ++i) {
    if (node.pci[static_cast<std::size_t>(chain[i])].kind == PciKind::bridge) ++count;
  }
  return count;
}

bool valid_pci(const NodeTopology& node, int pci) { return pci >= 0 && pci < static_cast<int>(node.pci.size()); }

int endpoint_pci(const NodeTopology& node, Endpoint e) {
  if (e.kind == Endpoint::Kind::gpu) return node.gpus[static_cast<std::size_t>(e.index)].pci;
  return node.nics[static_cast<std::size_t>(e.index)].pci;
}

int endpoint_numa(const NodeTopology& node, Endpoint e) {
  if (e.kind == Endpoint::Kind::gpu) return node.gpus[static_cast<std::size_t>(e.index)].numa;
  return node.nics[static_cast<std::size_t>(e.index)].numa;
}

}  // namespace

std::string to_string(const Connection& connection) {
  switch (connection.kind) {
    case PathClass::self: return "X";
    case PathClass::nvlink: return fmt::format("NV{}", connection.nvlinks);
    case PathClass::pix: return "PIX";
    case PathClass::pxb: return "PXB";
    case PathClass::phb: return "PHB";
    case PathClass::node: return "NODE";
    case PathClass::sys: return "SYS";
    case PathClass::unknown: break;
  }
  return "?";
}

PathClass pci_path_class(const NodeTopology& node, int pci_a, int pci_b) {
  if (!valid_pci(node, pci_a) || !valid_pci(node, pci_b)) return PathClass::unknown;
  if (pci_a == pci_b) return PathClass::self;
  const std::vector<int> chain_a = chain_to_root(node, pci_a);
  const std::vector<int> chain_b = chain_to_root(node, pci_b);
  for (std::size_t i = 0; i < chain_a.size(); ++i) {
    const auto found = std::find(chain_b.begin(), chain_b.end(), chain_a[i]);
    if (found == chain_b.end()) continue;
    const PciObject& ancestor = node.pci[static_cast<std::size_t>(chain_a[i])];
    if (ancestor.kind == PciKind::host_bridge) return PathClass::phb;
    const auto position_b = static_cast<std::size_t>(found - chain_b.begin());
    const int deepest = std::max(bridges_below(node, chain_a, i), bridges_below(node, chain_b, position_b));
    // With every bridge recorded, a switch is an upstream port with downstream ports below
    // it: two devices in the same switch each cross one downstream port, and more bridges
    // on a side mean nested switches. Where each bridge stands for a whole switch (NCCL's
    // dump), any bridge below the common one is a second switch: PXB, as NCCL and
    // nvidia-smi say.
    const int one_switch = node.pci_detail == PciTreeDetail::switches_only ? 0 : 1;
    return deepest <= one_switch ? PathClass::pix : PathClass::pxb;
  }
  // Different PCI trees: whether the CPU interconnect is crossed decides NODE or SYS.
  const int numa_a = numa_of_root(node, chain_a);
  const int numa_b = numa_of_root(node, chain_b);
  if (numa_a >= 0 && numa_b >= 0 && numa_a != numa_b) return PathClass::sys;
  // Without host bridges in the tree, two trees of one NUMA node may hang off one host
  // bridge (PHB) or two (NODE): the source cannot tell, so neither is claimed.
  if (node.pci_detail == PciTreeDetail::switches_only) return PathClass::unknown;
  if (numa_a >= 0 && numa_b >= 0) return PathClass::node;
  // A tree attached to the whole machine (no single NUMA node): on a one-NUMA-node machine
  // that is still local; otherwise the locality is not known.
  if (node.numa_nodes.size() <= 1) return PathClass::node;
  return PathClass::unknown;
}

bool turns_in_root_complex(const NodeTopology& node, int pci_a, int pci_b) {
  switch (pci_path_class(node, pci_a, pci_b)) {
    case PathClass::phb:
    case PathClass::node: return true;
    case PathClass::unknown: break;
    default: return false;
  }
  // Unknown because the source records no host bridges (NCCL's dump): two trees of one
  // NUMA node still meet in that socket's root complex, one host bridge or two.
  if (!valid_pci(node, pci_a) || !valid_pci(node, pci_b)) return false;
  const int numa_a = numa_of_root(node, chain_to_root(node, pci_a));
  return numa_a >= 0 && numa_a == numa_of_root(node, chain_to_root(node, pci_b));
}

int nvlinks_to_gpu(const NodeTopology& node, int gpu, const std::string& peer_bus_id) {
  const int gpu_index = node.gpus[static_cast<std::size_t>(gpu)].index;
  int links = 0;
  for (const NvlinkGroup& group : node.nvlinks) {
    if (group.gpu == gpu_index && group.peer == NvlinkPeer::gpu && group.remote_bus_id == peer_bus_id) {
      links += group.links;
    }
  }
  return links;
}

std::optional<int> gpu_with_unrecorded_nvlinks(const NodeTopology& node, const std::vector<int>& gpus) {
  for (const int gpu : gpus) {
    if (node.gpus[static_cast<std::size_t>(gpu)].nvlinks_unrecorded) return gpu;
  }
  return std::nullopt;
}

int nvlinks_to_switches(const NodeTopology& node, int gpu) {
  const int gpu_index = node.gpus[static_cast<std::size_t>(gpu)].index;
  int links = 0;
  for (const NvlinkGroup& group : node.nvlinks) {
    if (group.gpu == gpu_index && group.peer == NvlinkPeer::nvswitch) links += group.links;
  }
  return links;
}

Connection classify(const NodeTopology& node, Endpoint a, Endpoint b) {
  if (a.kind == b.kind && a.index == b.index) return {PathClass::self, 0};
  if (a.kind == Endpoint::Kind::gpu && b.kind == Endpoint::Kind::gpu) {
    const std::string& bus_b = node.gpus[static_cast<std::size_t>(b.index)].bus_id;
    const int direct = nvlinks_to_gpu(node, a.index, bus_b);
    if (direct > 0) return {PathClass::nvlink, direct};
    // Through NVSwitches every GPU reaches every other with all of its switch links; the
    // pair is limited by the GPU with fewer (nvidia-smi prints the same).
    const int switched = std::min(nvlinks_to_switches(node, a.index), nvlinks_to_switches(node, b.index));
    if (switched > 0) return {PathClass::nvlink, switched};
    // An NVLink part whose source cannot record NVLink: the PCI path would be a guess.
    if (node.gpus[static_cast<std::size_t>(a.index)].nvlinks_unrecorded ||
        node.gpus[static_cast<std::size_t>(b.index)].nvlinks_unrecorded)
      return {PathClass::unknown, 0};
  }
  const int pci_a = endpoint_pci(node, a);
  const int pci_b = endpoint_pci(node, b);
  // Two endpoints in one PCI function (ports of one NIC): they share the device's
  // link, as two functions behind one switch port would, so PIX rather than the device itself.
  if (valid_pci(node, pci_a) && pci_a == pci_b) return {PathClass::pix, 0};
  if (valid_pci(node, pci_a) && valid_pci(node, pci_b)) return {pci_path_class(node, pci_a, pci_b), 0};
  // Without a PCI tree, NUMA placement still proves a path crosses sockets.
  const int numa_a = endpoint_numa(node, a);
  const int numa_b = endpoint_numa(node, b);
  if (numa_a >= 0 && numa_b >= 0 && numa_a != numa_b) return {PathClass::sys, 0};
  return {PathClass::unknown, 0};
}

double pci_path_bottleneck_gbps(const NodeTopology& node, int pci_a, int pci_b) {
  if (!valid_pci(node, pci_a) || !valid_pci(node, pci_b)) return 0;
  const std::vector<int> chain_a = chain_to_root(node, pci_a);
  const std::vector<int> chain_b = chain_to_root(node, pci_b);
  double bottleneck = 0;
  auto consider = [&](int pci) {
    const double gbps = node.pci[static_cast<std::size_t>(pci)].link_gbps;
    if (gbps > 0 && (bottleneck == 0 || gbps < bottleneck)) bottleneck = gbps;
  };
  // Links up to the common ancestor; for separate trees every link up to both host bridges.
  for (const int pci : chain_a) {
    if (std::find(chain_b.begin(), chain_b.end(), pci) != chain_b.end()) break;
    consider(pci);
  }
  for (const int pci : chain_b) {
    if (std::find(chain_a.begin(), chain_a.end(), pci) != chain_a.end()) break;
    consider(pci);
  }
  return bottleneck;
}

}  // namespace commbench
