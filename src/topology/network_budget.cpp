// A node's budgets between nodes: which compute NICs a layout's GPUs use, the active ports
// they count, and one GPU's flow through its NICs (bounded by the PCIe path to each NIC and
// by the GPU's own link). Kept apart from the budgets inside a node (bandwidth_model.cpp):
// NICs, ports and NCCL's choice of them are their own concern.
#include "commbench/topology/bandwidth_model.hpp"

#include <algorithm>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "commbench/topology/gpu_nics.hpp"
#include "commbench/topology/link_spec.hpp"
#include "commbench/topology/nic_roles.hpp"
#include "commbench/topology/pci_path.hpp"
#include "path_budget_parts.hpp"

namespace commbench {
namespace {

// The compute NICs on the job's GPUs' switches: for each GPU the nearest ones
// (topology/gpu_nics, PIX before PXB), each NIC once. Rail-optimised nodes give each GPU
// a NIC on its own switch; NCCL uses those.
std::vector<int> near_nics(const NodeTopology& node, const NicRoles& roles, const UsedGpus& used) {
  std::vector<int> chosen;
  std::set<int> seen;
  for (const int gpu : used.indexes)
    for (const int nic : nearest_compute_nics(node, roles, gpu))
      if (seen.insert(nic).second) chosen.push_back(nic);
  return chosen;
}

// Only compute ports: a front-end or storage NIC on a GPU's switch, or a bridge, carries
// none of the job's traffic (NCCL picks the fabric's NICs).
std::vector<int> nics_for(const NodeTopology& node, const NicRoles& roles, const UsedGpus& used) {
  std::vector<int> chosen = near_nics(node, roles, used);
  if (!chosen.empty()) return chosen;
  for (std::size_t n = 0; n < node.nics.size(); ++n) {
    if (node.nics[n].rdma && roles.role[n] == NicRole::compute) chosen.push_back(static_cast<int>(n));
  }
  return chosen;
}

struct PortSum {
  double gbps = 0;
  double smallest = 0;
  int ports = 0;
  std::string names;  // the NICs with an active port
};

PortSum active_ports(const NodeTopology& node, const std::vector<int>& nics) {
  PortSum sum;
  for (const int n : nics) {
    const Nic& nic = node.nics[static_cast<std::size_t>(n)];
    bool counted = false;
    for (const NicPort& port : nic.ports) {
      if (!port.active() || port.rate_gbit <= 0) continue;
      sum.gbps += port.bandwidth_gbps();
      sum.smallest = sum.ports == 0 ? port.bandwidth_gbps() : std::min(sum.smallest, port.bandwidth_gbps());
      ++sum.ports;
      if (!counted) sum.names += (sum.names.empty() ? "" : ",") + nic.name;
      counted = true;
    }
  }
  return sum;
}

// Why `nics` carry nothing the model can count: no active port at all, or active ports
// whose rate the source did not record (an hwloc export has states but no rates).
PathBudget no_countable_port(const NodeTopology& node, const std::vector<int>& nics) {
  std::string unrated;
  for (const int n : nics) {
    const Nic& nic = node.nics[static_cast<std::size_t>(n)];
    for (const NicPort& port : nic.ports)
      if (port.active() && port.rate_gbit <= 0) unrated += (unrated.empty() ? "" : ", ") + nic.name;
  }
  if (unrated.empty()) return unknown_budget("no active NIC port found to carry traffic between nodes");
  return unknown_budget("active NIC ports of unrecorded rate (" + unrated +
                        "): the source gives port states but no rates");
}

// The single fastest active port: for host ranks without RDMA ports MPI's likeliest
// interface (the basis says it is a guess), and for a flow from a GPU without a NIC of its own.
std::vector<int> fastest_active_nic(const NodeTopology& node, const NicRoles& roles) {
  int best = -1;
  double best_gbit = 0;
  for (std::size_t n = 0; n < node.nics.size(); ++n) {
    if (roles.role[n] != NicRole::compute) continue;
    for (const NicPort& port : node.nics[n].ports) {
      if (port.active() && port.rate_gbit > best_gbit) {
        best_gbit = port.rate_gbit;
        best = static_cast<int>(n);
      }
    }
  }
  return best < 0 ? std::vector<int>{} : std::vector<int>{best};
}

// What one GPU pushes between nodes through `chosen` NICs: each NIC's active ports, at
// most the PCIe path from the GPU to that NIC, and all of them together at most the GPU's
// own PCIe link, which GPUDirect RDMA crosses for every byte. gpu -1: host memory, the
// ports alone.
struct GpuNetworkFlow {
  double spec_gbps = 0, achievable_gbps = 0;
  int ports = 0;
  std::string text;
};

GpuNetworkFlow gpu_network_flow(const NodeTopology& node, int gpu, const GpuNics& chosen) {
  GpuNetworkFlow flow;
  const Gpu* device = gpu >= 0 ? &node.gpus[static_cast<std::size_t>(gpu)] : nullptr;
  std::string names;
  for (const int n : chosen.nics) {
    const PortSum ports = active_ports(node, {n});
    if (ports.ports == 0) continue;
    double spec = ports.gbps, achievable = ports.gbps * kNetworkAchievableFraction;
    const int nic_pci = node.nics[static_cast<std::size_t>(n)].pci;
    if (device && device->pci >= 0 && nic_pci >= 0) {
      if (const double path = pci_path_bottleneck_gbps(node, device->pci, nic_pci); path > 0) {
        spec = std::min(spec, path);
        achievable = std::min(achievable, path * kNcclPcieFraction);
      }
    }
    flow.spec_gbps += spec;
    flow.achievable_gbps += achievable;
    flow.ports += ports.ports;
    names += (names.empty() ? "" : ",") + ports.names;
  }
  if (flow.ports == 0) return flow;
  flow.text = "NIC " + names + " " + format_gbps(flow.spec_gbps);
  if (chosen.sharing_gpus > 1 && chosen.local_nics > static_cast<int>(chosen.nics.size())) {
    flow.text += fmt::format(" (GPU {}'s share: its switch's {} NICs serve {} of the job's GPUs)", device->index,
                             chosen.local_nics, chosen.sharing_gpus);
  }
  const double own_link = device && device->pci >= 0 ? node.pci[static_cast<std::size_t>(device->pci)].link_gbps : 0;
  if (own_link > 0 && own_link < flow.spec_gbps) {
    flow.text += fmt::format("; GPU {}'s PCIe link {} carries it all", device->index, format_gbps(own_link));
    flow.spec_gbps = own_link;
  }
  if (own_link > 0) flow.achievable_gbps = std::min(flow.achievable_gbps, own_link * kNcclPcieFraction);
  return flow;
}

// The node's ports between nodes for a layout: the compute NICs its GPUs use, or for host
// ranks without RDMA ports the fastest active port (an assumption, said in the text).
struct NodePorts {
  std::vector<int> nics;
  std::vector<int> candidates;  // what was looked at, for the reason when none counts
  PortSum sum;
  std::string assumption;
};

NodePorts node_ports(const NodeTopology& node, const JobLayout& layout) {
  const UsedGpus used = used_gpus(node, layout);
  const NicRoles roles = nic_roles(node);
  NodePorts ports;
  ports.nics = ports.candidates = nics_for(node, roles, used);
  if (layout.gpu_bus_ids.empty() && active_ports(node, ports.nics).ports == 0) {
    ports.nics = fastest_active_nic(node, roles);
    ports.assumption = " (assumes MPI uses the fastest active port)";
  }
  if (!ports.nics.empty()) ports.candidates = ports.nics;
  ports.sum = active_ports(node, ports.nics);
  return ports;
}

// The flow of GPU `gpu` (index into node.gpus; -1 for host ranks) among the job's GPUs
// `job_gpus`: through the NICs NCCL gives it, or without a NIC on its switch through the
// fastest compute port, still from the GPU (its PCIe path and own link bound it). No
// ports: nullopt.
std::optional<GpuNetworkFlow> network_flow(const NodeTopology& node, const NicRoles& roles,
                                           const std::vector<int>& job_gpus, int gpu) {
  GpuNetworkFlow flow;
  if (gpu >= 0) flow = gpu_network_flow(node, gpu, nccl_nics_of_gpu(node, roles, job_gpus, gpu));
  if (flow.ports == 0) flow = gpu_network_flow(node, gpu, {fastest_active_nic(node, roles), 0, 0});
  if (flow.ports == 0) return std::nullopt;
  return flow;
}

PathBudget budget_of(const std::optional<GpuNetworkFlow>& flow) {
  if (!flow) return unknown_budget("no active NIC port found to carry traffic between nodes");
  return {flow->spec_gbps, flow->achievable_gbps, flow->text};
}

}  // namespace

NodeNetworkPorts inter_node_ports(const NodeTopology& node, const JobLayout& layout) {
  const NodePorts ports = node_ports(node, layout);
  if (ports.sum.ports == 0) return {};
  return {ports.sum.ports, ports.sum.gbps / ports.sum.ports};
}

PathBudget inter_node_budget(const NodeTopology& node, const JobLayout& layout) {
  const NodePorts ports = node_ports(node, layout);
  const PortSum& sum = ports.sum;
  const std::string& assumption = ports.assumption;
  if (sum.ports == 0) return no_countable_port(node, ports.candidates);
  const std::string text = fmt::format("{} active NIC port{} ({}) = {} per node", sum.ports, sum.ports == 1 ? "" : "s",
                                       sum.names, format_gbps(sum.gbps));
  return {sum.gbps, sum.gbps * kNetworkAchievableFraction, text + assumption};
}

PathBudget single_nic_budget(const NodeTopology& node, const JobLayout& layout) {
  PathBudget all = inter_node_budget(node, layout);
  if (!all.spec_gbps) return all;
  // In a ring of point-to-point sends only the node's last GPU sends out and its first
  // receives, each through the NICs NCCL gives it (topology/gpu_nics).
  const UsedGpus used = used_gpus(node, layout);
  const NicRoles roles = nic_roles(node);
  std::optional<GpuNetworkFlow> narrowest;
  const std::vector<int> boundary =
      used.indexes.empty() ? std::vector<int>{-1} : std::vector<int>{used.indexes.back(), used.indexes.front()};
  for (const int gpu : boundary) {
    const std::optional<GpuNetworkFlow> flow = network_flow(node, roles, used.indexes, gpu);
    if (flow && (!narrowest || flow->spec_gbps < narrowest->spec_gbps)) narrowest = flow;
  }
  return budget_of(narrowest);
}

PathBudget gpu_network_budget(const NodeTopology& node, const JobLayout& layout, const std::string& gpu_bus_id) {
  const UsedGpus used = used_gpus(node, layout);
  if (!used.missing.empty()) return unknown_budget("GPU " + used.missing + " is not in the probed topology");
  const auto gpu = std::find_if(node.gpus.begin(), node.gpus.end(),
                                [&](const Gpu& candidate) { return candidate.bus_id == gpu_bus_id; });
  if (gpu == node.gpus.end()) return unknown_budget("GPU " + gpu_bus_id + " is not in the probed topology");
  return budget_of(network_flow(node, nic_roles(node), used.indexes, static_cast<int>(gpu - node.gpus.begin())));
}

}  // namespace commbench
