#include "commbench/topology/bandwidth_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "commbench/core/collective_descriptor.hpp"
#include "commbench/topology/link_spec.hpp"
#include "commbench/topology/pci_path.hpp"

namespace commbench {
namespace {

PathBudget unknown_budget(std::string why) { return {std::nullopt, std::nullopt, std::move(why)}; }

// Indexes into node.gpus of the layout's GPUs, in bus order; nullopt names a missing one.
struct UsedGpus {
  std::vector<int> indexes;
  std::string missing;
};

UsedGpus used_gpus(const NodeTopology& node, const JobLayout& layout) {
  UsedGpus used;
  for (const std::string& bus_id : layout.gpu_bus_ids) {
    const auto found =
        std::find_if(node.gpus.begin(), node.gpus.end(), [&](const Gpu& g) { return g.bus_id == bus_id; });
    if (found == node.gpus.end()) {
      used.missing = bus_id;
      return used;
    }
    used.indexes.push_back(static_cast<int>(found - node.gpus.begin()));
  }
  std::sort(used.indexes.begin(), used.indexes.end(), [&](int a, int b) {
    return node.gpus[static_cast<std::size_t>(a)].bus_id < node.gpus[static_cast<std::size_t>(b)].bus_id;
  });
  used.indexes.erase(std::unique(used.indexes.begin(), used.indexes.end()), used.indexes.end());
  return used;
}

double spec_per_link(const NodeTopology& node, int gpu) {
  const Gpu& g = node.gpus[static_cast<std::size_t>(gpu)];
  for (const NvlinkGroup& group : node.nvlinks) {
    if (group.gpu == g.index && group.gbps_per_link > 0) return group.gbps_per_link;
  }
  return nvlink_link_bandwidth_gbps(g.nvlink_generation).value_or(0);
}

// NVLinks a GPU can use toward the job: all switch links, plus direct links to other used GPUs.
int usable_nvlinks(const NodeTopology& node, int gpu, const std::vector<int>& used) {
  int links = nvlinks_to_switches(node, gpu);
  for (const int other : used) {
    if (other != gpu) links += nvlinks_to_gpu(node, gpu, node.gpus[static_cast<std::size_t>(other)].bus_id);
  }
  return links;
}

PathBudget nvlink_budget(const NodeTopology& node, const std::vector<int>& used) {
  double spec = 0, achievable = 0;
  int narrowest = -1;
  for (const int gpu : used) {
    const int links = usable_nvlinks(node, gpu, used);
    const double per_link = spec_per_link(node, gpu);
    if (links == 0 || per_link == 0) return unknown_budget("");
    const double gpu_spec = links * per_link;
    if (narrowest < 0 || gpu_spec < spec) {
      spec = gpu_spec;
      achievable = links * nccl_model_nvlink_gbps(node.gpus[static_cast<std::size_t>(gpu)].nvlink_generation);
      narrowest = gpu;
    }
  }
  const Gpu& g = node.gpus[static_cast<std::size_t>(narrowest)];
  const int links = usable_nvlinks(node, narrowest, used);
  char text[160];
  std::snprintf(text, sizeof text, "NVLink %d: %d links x %.4g GB/s per GPU (GPU %d) = %s", g.nvlink_generation, links,
                spec_per_link(node, narrowest), g.index, format_gbps(spec).c_str());
  if (achievable == 0) achievable = spec;  // generation unknown: no model figure to lower it
  return {spec, achievable, text};
}

// An NVLink part whose NVLinks the source could not record: its PCIe path is not its link.
PathBudget unrecorded_nvlinks_budget(const NodeTopology& node, int gpu) {
  return unknown_budget("the NVLinks of GPU " + std::to_string(node.gpus[static_cast<std::size_t>(gpu)].index) +
                        " (an NVLink part) were not recorded by the source");
}

bool crosses_sockets(const NodeTopology& node, int gpu_a, int gpu_b) {
  const Connection c = classify(node, {Endpoint::Kind::gpu, gpu_a}, {Endpoint::Kind::gpu, gpu_b});
  return c.kind == PathClass::sys;
}

PathBudget pcie_ring_budget(const NodeTopology& node, const std::vector<int>& used, bool wrap) {
  double spec = 0;
  bool sockets = false;
  const std::size_t hops = wrap ? used.size() : used.size() - 1;
  for (std::size_t i = 0; i < hops; ++i) {
    const int a = used[i];
    const int b = used[(i + 1) % used.size()];
    const double hop = pci_path_bottleneck_gbps(node, node.gpus[static_cast<std::size_t>(a)].pci,
                                                node.gpus[static_cast<std::size_t>(b)].pci);
    if (hop == 0) return unknown_budget("PCIe link speeds between the GPUs are unknown");
    spec = (spec == 0) ? hop : std::min(spec, hop);
    sockets = sockets || crosses_sockets(node, a, b);
  }
  std::string text = "PCIe: narrowest link between neighbouring GPUs " + format_gbps(spec);
  if (sockets) text += " (the path crosses the CPU interconnect, whose bandwidth is not modelled)";
  return {spec, spec * kNcclPcieFraction, text};
}

// NICs on the same PCIe switch as one of the GPUs (PIX/PXB).
std::vector<int> near_nics(const NodeTopology& node, const UsedGpus& used) {
  std::vector<int> chosen;
  std::set<int> seen;
  // Rail-optimised nodes give each GPU a NIC on its own switch; NCCL uses those.
  for (const int gpu : used.indexes) {
    for (std::size_t n = 0; n < node.nics.size(); ++n) {
      const PathClass kind =
          classify(node, {Endpoint::Kind::gpu, gpu}, {Endpoint::Kind::nic, static_cast<int>(n)}).kind;
      if ((kind == PathClass::pix || kind == PathClass::pxb) && seen.insert(static_cast<int>(n)).second) {
        chosen.push_back(static_cast<int>(n));
      }
    }
  }
  return chosen;
}

std::vector<int> nics_for(const NodeTopology& node, const UsedGpus& used) {
  std::vector<int> chosen = near_nics(node, used);
  if (!chosen.empty()) return chosen;
  for (std::size_t n = 0; n < node.nics.size(); ++n) {
    if (node.nics[n].rdma) chosen.push_back(static_cast<int>(n));
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

// The single fastest active port: for host ranks without RDMA ports MPI's likeliest
// interface (the basis says it is a guess), and for a flow from a GPU without a NIC of its own.
std::vector<int> fastest_active_nic(const NodeTopology& node) {
  int best = -1;
  double best_gbit = 0;
  for (std::size_t n = 0; n < node.nics.size(); ++n) {
    for (const NicPort& port : node.nics[n].ports) {
      if (port.active() && port.rate_gbit > best_gbit) {
        best_gbit = port.rate_gbit;
        best = static_cast<int>(n);
      }
    }
  }
  return best < 0 ? std::vector<int>{} : std::vector<int>{best};
}

}  // namespace

double nccl_model_nvlink_gbps(int generation) {
  switch (generation) {
    case 1: return 18.0;
    case 2: return 20.0;
    case 3: return 20.0;
    case 4: return 20.6;
    case 5: return 40.1;
    default: return 0.0;
  }
}

PathBudget intra_node_budget(const NodeTopology& node, const JobLayout& layout) {
  if (layout.gpu_bus_ids.empty()) {
    return unknown_budget("ranks on one node exchange through shared memory, which has no spec bandwidth");
  }
  const UsedGpus used = used_gpus(node, layout);
  if (!used.missing.empty()) return unknown_budget("GPU " + used.missing + " is not in the probed topology");
  if (used.indexes.size() < 2) return unknown_budget("one GPU per node: no link inside the node is crossed");
  if (const auto gpu = gpu_with_unrecorded_nvlinks(node, used.indexes)) return unrecorded_nvlinks_budget(node, *gpu);
  PathBudget nvlink = nvlink_budget(node, used.indexes);
  if (nvlink.spec_gbps) return nvlink;
  return pcie_ring_budget(node, used.indexes, true);
}

PathBudget pair_budget(const NodeTopology& node, const JobLayout& layout) {
  if (layout.gpu_bus_ids.empty()) {
    return unknown_budget("ranks on one node exchange through shared memory, which has no spec bandwidth");
  }
  const UsedGpus used = used_gpus(node, layout);
  if (!used.missing.empty()) return unknown_budget("GPU " + used.missing + " is not in the probed topology");
  if (used.indexes.size() < 2) return unknown_budget("one GPU per node: no link inside the node is crossed");
  if (const auto gpu = gpu_with_unrecorded_nvlinks(node, used.indexes)) return unrecorded_nvlinks_budget(node, *gpu);
  // A pair through NVSwitches gets the smaller GPU's switch links; directly linked GPUs
  // their shared links. The narrowest neighbouring pair bounds the whole exchange.
  double spec = 0, achievable = 0;
  std::string text;
  for (std::size_t i = 0; i < used.indexes.size(); ++i) {
    const int a = used.indexes[i];
    const int b = used.indexes[(i + 1) % used.indexes.size()];
    const Connection c = classify(node, {Endpoint::Kind::gpu, a}, {Endpoint::Kind::gpu, b});
    double pair_spec = 0, pair_achievable = 0;
    if (c.kind == PathClass::nvlink && spec_per_link(node, a) > 0) {
      pair_spec = c.nvlinks * spec_per_link(node, a);
      const double model = nccl_model_nvlink_gbps(node.gpus[static_cast<std::size_t>(a)].nvlink_generation);
      pair_achievable = model > 0 ? c.nvlinks * model : pair_spec;
    } else {
      pair_spec = pci_path_bottleneck_gbps(node, node.gpus[static_cast<std::size_t>(a)].pci,
                                           node.gpus[static_cast<std::size_t>(b)].pci);
      pair_achievable = pair_spec * kNcclPcieFraction;
    }
    if (pair_spec == 0)
      return unknown_budget("the link between GPU " + std::to_string(node.gpus[static_cast<std::size_t>(a)].index) +
                            " and GPU " + std::to_string(node.gpus[static_cast<std::size_t>(b)].index) + " is unknown");
    if (spec == 0 || pair_spec < spec) {
      spec = pair_spec;
      achievable = pair_achievable;
      text = "GPU " + std::to_string(node.gpus[static_cast<std::size_t>(a)].index) + " to GPU " +
             std::to_string(node.gpus[static_cast<std::size_t>(b)].index) + ": " + to_string(c) + " " +
             format_gbps(pair_spec);
    }
  }
  return {spec, achievable, text};
}

PathBudget inter_node_budget(const NodeTopology& node, const JobLayout& layout) {
  const UsedGpus used = used_gpus(node, layout);
  std::vector<int> nics = layout.gpu_bus_ids.empty() ? std::vector<int>{} : nics_for(node, used);
  std::string assumption;
  if (layout.gpu_bus_ids.empty()) {
    nics = nics_for(node, used);
    if (active_ports(node, nics).ports == 0) {
      nics = fastest_active_nic(node);
      assumption = " (assumes MPI uses the fastest active port)";
    }
  }
  const PortSum sum = active_ports(node, nics);
  if (sum.ports == 0) return unknown_budget("no active NIC port found to carry traffic between nodes");
  const std::string text = std::to_string(sum.ports) + " active NIC port" + (sum.ports == 1 ? "" : "s") + " (" +
                           sum.names + ") = " + format_gbps(sum.gbps) + " per node";
  return {sum.gbps, sum.gbps * kNetworkAchievableFraction, text + assumption};
}

PathBudget single_nic_budget(const NodeTopology& node, const JobLayout& layout) {
  PathBudget all = inter_node_budget(node, layout);
  if (!all.spec_gbps) return all;
  // In a ring of point-to-point sends only the node's last GPU sends out and its first
  // receives: each uses the NIC on its own switch (or, without one, the fastest port).
  const UsedGpus used = used_gpus(node, layout);
  double bound = 0;
  std::string names;
  for (const int gpu :
       {used.indexes.empty() ? -1 : used.indexes.back(), used.indexes.empty() ? -1 : used.indexes.front()}) {
    UsedGpus one;
    if (gpu >= 0) one.indexes = {gpu};
    PortSum near = gpu >= 0 ? active_ports(node, near_nics(node, one)) : PortSum{};
    if (near.ports == 0) near = active_ports(node, fastest_active_nic(node));
    if (near.ports == 0) continue;
    // Several ports near one GPU: NCCL spreads a flow over them, so they add up.
    if (bound == 0 || near.gbps < bound) {
      bound = near.gbps;
      names = near.names;
    }
  }
  if (bound == 0) return unknown_budget("no active NIC port found to carry traffic between nodes");
  return {bound, bound * kNetworkAchievableFraction, "NIC " + names + " " + format_gbps(bound)};
}

TheoreticalBusbw theoretical_busbw(Collective op, const NodeTopology& node, const JobLayout& layout) {
  const int nodes = std::max(layout.nodes, 1);
  const int per_node = std::max(layout.ranks_per_node, 1);
  const int ranks = nodes * per_node;
  if (ranks == 1) return {std::nullopt, std::nullopt, "one rank: nothing crosses a link (busbw is 0 by definition)"};

  // Each term: a path budget scaled by how much of a rank's bus traffic crosses it.
  struct Term {
    PathBudget budget;
    double scale;
    std::string label;
  };
  std::vector<Term> terms;
  const double n = ranks, k = per_node;
  switch (descriptor_of(op).traffic) {
    case BusTraffic::neighbour_pair:
      if (per_node > 1) terms.push_back({pair_budget(node, layout), 1.0, "intra-node"});
      if (nodes > 1) terms.push_back({single_nic_budget(node, layout), 1.0, "inter-node"});
      break;
    case BusTraffic::all_pairs:
      // Per rank, (k-1)/n of its send buffer stays on the node and (n-k)/n leaves it; busbw
      // counts (n-1)/n, so each path's budget scales by (n-1) over its share.
      if (per_node > 1) terms.push_back({intra_node_budget(node, layout), (n - 1) / (k - 1), "intra-node"});
      if (nodes > 1) terms.push_back({inter_node_budget(node, layout), (n - 1) / (k * (n - k)), "inter-node"});
      break;
    case BusTraffic::ring:
      // Rings cross each node boundary once per direction: a node's NICs carry busbw in total.
      if (per_node > 1) terms.push_back({intra_node_budget(node, layout), 1.0, "intra-node"});
      if (nodes > 1) terms.push_back({inter_node_budget(node, layout), 1.0, "inter-node"});
      break;
  }
  TheoreticalBusbw result;
  std::string basis;
  for (const Term& term : terms) {
    if (!term.budget.spec_gbps) {
      return {std::nullopt, std::nullopt, term.label + " bandwidth unknown: " + term.budget.description};
    }
    const double spec = *term.budget.spec_gbps * term.scale;
    const double achievable = *term.budget.achievable_gbps * term.scale;
    // Spec and achievable are bounded separately: the narrowest path may differ between them.
    result.spec_gbps = result.spec_gbps ? std::min(*result.spec_gbps, spec) : spec;
    result.achievable_gbps = result.achievable_gbps ? std::min(*result.achievable_gbps, achievable) : achievable;
    std::string part = term.label + ": " + term.budget.description;
    if (term.scale != 1.0) {
      char scale[48];
      std::snprintf(scale, sizeof scale, " x %.4g", term.scale);
      part += scale;
    }
    basis += (basis.empty() ? "" : "; ") + part;
  }
  result.basis = terms.size() > 1 ? "min of " + basis : basis;
  return result;
}

}  // namespace commbench
