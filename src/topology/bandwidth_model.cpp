#include "commbench/topology/bandwidth_model.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "commbench/core/collective_descriptor.hpp"
#include "commbench/topology/allreduce_algorithms.hpp"
#include "commbench/topology/gpu_ring.hpp"
#include "commbench/topology/link_spec.hpp"
#include "commbench/topology/nic_roles.hpp"
#include "commbench/topology/nvlink_rate.hpp"
#include "commbench/topology/pci_path.hpp"
#include "path_budget_parts.hpp"

namespace commbench {

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

namespace {

// NVLinks a GPU can use toward the job: all switch links, plus direct links to other used GPUs.
int usable_nvlinks(const NodeTopology& node, int gpu, const std::vector<int>& used) {
  int links = nvlinks_to_switches(node, gpu);
  for (const int other : used) {
    if (other != gpu) links += nvlinks_to_gpu(node, gpu, node.gpus[static_cast<std::size_t>(other)].bus_id);
  }
  return links;
}

// Every GPU's usable NVLinks together: rings can run over each of them (NCCL builds one ring
// per link pair), so the GPU with the least bandwidth bounds the node.
PathBudget nvlink_budget(const NodeTopology& node, const std::vector<int>& used) {
  double spec = 0, achievable = 0;
  int narrowest = -1;
  for (const int gpu : used) {
    const int links = usable_nvlinks(node, gpu, used);
    if (links == 0) return unknown_budget("");
    const NvlinkRate rate = nvlink_rate(node.gpus[static_cast<std::size_t>(gpu)]);
    if (!rate.spec_gbps) return unknown_budget("NVLink rate unknown: " + rate.why_unknown);
    const double gpu_spec = links * *rate.spec_gbps;
    if (narrowest < 0 || gpu_spec < spec) {
      spec = gpu_spec;
      achievable = nvlink_achievable_gbps(rate, links);
      narrowest = gpu;
    }
  }
  const Gpu& g = node.gpus[static_cast<std::size_t>(narrowest)];
  const int links = usable_nvlinks(node, narrowest, used);
  const NvlinkRate rate = nvlink_rate(g);
  const bool capped = links * *rate.achievable_gbps > achievable;
  return {spec, achievable,
          fmt::format("NVLink {}: {} links x {:.6g} GB/s per GPU (GPU {}) = {}{}", g.nvlink_generation, links,
                      *rate.spec_gbps, g.index, format_gbps(spec),
                      capped ? fmt::format("; achievable at most {} per GPU (NVIDIA's figure for this GPU)",
                                           format_gbps(achievable))
                             : "")};
}

// An NVLink part whose NVLinks the source could not record: its PCIe path is not its link.
PathBudget unrecorded_nvlinks_budget(const NodeTopology& node, int gpu) {
  return unknown_budget(fmt::format("the NVLinks of GPU {} (an NVLink part) were not recorded by the source",
                                    node.gpus[static_cast<std::size_t>(gpu)].index));
}

bool any_nvlink(const NodeTopology& node, const std::vector<int>& used) {
  return std::any_of(used.begin(), used.end(), [&](int gpu) { return usable_nvlinks(node, gpu, used) > 0; });
}

// Not every pair NVLinked: the best ring decides. If it stays on NVLink, rings can use
// every link; if it must cross PCIe, its slowest hop bounds the whole ring.
PathBudget partial_mesh_budget(const NodeTopology& node, const std::vector<int>& used) {
  std::string why;
  const std::optional<GpuRing> ring = best_gpu_ring(node, used, why);
  if (!ring) return unknown_budget(why);
  if (ring->nvlink_only) return nvlink_budget(node, used);
  return {ring->slowest.spec_gbps, ring->achievable_gbps, "not every GPU pair is NVLinked, " + describe(node, *ring)};
}

// Spec and achievable are each the smallest over the hops: a hop between sockets may have
// the widest PCIe links and still the smallest achievable figure (NCCL's CPU interconnect).
PathBudget pcie_ring_budget(const NodeTopology& node, const std::vector<int>& used, bool wrap) {
  double spec = 0, achievable = 0;
  std::string crossing;
  const std::size_t hops = wrap ? used.size() : used.size() - 1;
  for (std::size_t i = 0; i < hops; ++i) {
    const GpuHop hop = gpu_hop(node, used[i], used[(i + 1) % used.size()]);
    if (hop.spec_gbps == 0) return unknown_budget("PCIe link speeds between the GPUs are unknown");
    spec = (spec == 0) ? hop.spec_gbps : std::min(spec, hop.spec_gbps);
    achievable = (achievable == 0) ? hop.achievable_gbps : std::min(achievable, hop.achievable_gbps);
    add_crossing(crossing, hop.crossing);
  }
  std::string text = "PCIe: narrowest link between neighbouring GPUs " + format_gbps(spec);
  if (!crossing.empty()) text += " (the ring " + crossing + ")";
  return {spec, achievable, text};
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
  if (!any_nvlink(node, used.indexes)) return pcie_ring_budget(node, used.indexes, true);
  if (all_pairs_nvlinked(node, used.indexes)) return nvlink_budget(node, used.indexes);
  return partial_mesh_budget(node, used.indexes);
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
    const GpuHop hop = gpu_hop(node, a, b);
    if (hop.spec_gbps == 0) {
      return unknown_budget(fmt::format(
          "the link between GPU {} and GPU {} is unknown{}", node.gpus[static_cast<std::size_t>(a)].index,
          node.gpus[static_cast<std::size_t>(b)].index, hop.why_unknown.empty() ? "" : ": " + hop.why_unknown));
    }
    if (spec == 0 || hop.spec_gbps < spec) {
      spec = hop.spec_gbps;
      achievable = hop.achievable_gbps;
      text = fmt::format("GPU {} to GPU {}: {} {}{}", node.gpus[static_cast<std::size_t>(a)].index,
                         node.gpus[static_cast<std::size_t>(b)].index, hop.label, format_gbps(hop.spec_gbps),
                         hop.crossing.empty() ? "" : "; the path " + hop.crossing);
    }
  }
  return {spec, achievable, text};
}

namespace {

// Each term: a path budget scaled by how much of a rank's bus traffic crosses it.
struct Term {
  PathBudget budget;
  double scale;
  std::string label;
};

TheoreticalBusbw bound_by_terms(const std::vector<Term>& terms) {
  TheoreticalBusbw result;
  std::string basis;
  for (const Term& term : terms) {
    if (!term.budget.spec_gbps) {
      return {std::nullopt, std::nullopt, term.label + " bandwidth unknown: " + term.budget.description, ""};
    }
    const double spec = *term.budget.spec_gbps * term.scale;
    const double achievable = *term.budget.achievable_gbps * term.scale;
    // Spec and achievable are bounded separately: the narrowest path may differ between them.
    result.spec_gbps = result.spec_gbps ? std::min(*result.spec_gbps, spec) : spec;
    result.achievable_gbps = result.achievable_gbps ? std::min(*result.achievable_gbps, achievable) : achievable;
    std::string part = term.label + ": " + term.budget.description;
    if (term.scale != 1.0) part += fmt::format(" x {:.4g}", term.scale);
    basis += (basis.empty() ? "" : "; ") + part;
  }
  result.basis = terms.size() > 1 ? "min of " + basis : basis;
  result.algorithm = "ring";
  return result;
}

bool infiniband_fabric(const NodeTopology& node) {
  const NicRoles roles = nic_roles(node);
  return roles.compute_kind.rfind("InfiniBand", 0) == 0;
}

// The largest spec over the algorithms bounds whatever NCCL picks; the largest achievable
// is what its tuner would pick for large messages.
TheoreticalBusbw best_allreduce(const std::vector<AlgorithmBusbw>& algorithms, const TheoreticalBusbw& ring) {
  const AlgorithmBusbw* by_spec = &algorithms.front();
  const AlgorithmBusbw* by_achievable = &algorithms.front();
  for (const AlgorithmBusbw& algorithm : algorithms) {
    if (*algorithm.spec_gbps > *by_spec->spec_gbps) by_spec = &algorithm;
    if (algorithm.achievable_gbps && *algorithm.achievable_gbps > *by_achievable->achievable_gbps)
      by_achievable = &algorithm;
  }
  if (by_spec == &algorithms.front() && by_achievable == by_spec) return ring;
  TheoreticalBusbw best{by_spec->spec_gbps, by_achievable->achievable_gbps, "", by_spec->algorithm};
  best.basis = by_spec->algorithm + ": " + (by_spec == &algorithms.front() ? ring.basis : by_spec->basis);
  if (by_achievable != by_spec) {
    best.basis += "; achievable by " + by_achievable->algorithm + ": " +
                  (by_achievable == &algorithms.front() ? ring.basis : by_achievable->basis);
  }
  return best;
}

}  // namespace

TheoreticalBusbw theoretical_busbw(Collective op, const NodeTopology& node, const JobLayout& layout) {
  const int nodes = std::max(layout.nodes, 1);
  const int per_node = std::max(layout.ranks_per_node, 1);
  const int ranks = nodes * per_node;
  if (ranks == 1) return {std::nullopt, std::nullopt, "one rank: nothing crosses a link", ""};

  std::vector<Term> terms;
  const double n = ranks, k = per_node;
  switch (descriptor_of(op).traffic) {
    case BusTraffic::neighbour_pair:
      if (per_node > 1) terms.push_back({pair_budget(node, layout), 1.0, "intra-node"});
      if (nodes > 1) terms.push_back({single_nic_budget(node, layout), 1.0, "inter-node"});
      break;
    case BusTraffic::all_pairs: {
      // Per rank, (k-1)/n of its send buffer stays on the node and (n-k)/n leaves it; busbw
      // counts (n-1)/n, so each path's budget scales by (n-1) over its share.
      const UsedGpus used = used_gpus(node, layout);
      const bool partial_mesh = per_node > 1 && used.missing.empty() && used.indexes.size() > 1 &&
                                any_nvlink(node, used.indexes) && !all_pairs_nvlinked(node, used.indexes);
      if (partial_mesh) {
        // Some peers lack NVLink: they share the GPU's PCIe link, pair by pair.
        const PairwiseBound pairs = alltoall_pairwise_bound(node, used.indexes, ranks);
        terms.push_back({{pairs.spec_gbps, pairs.achievable_gbps, pairs.description}, 1.0, "intra-node"});
      } else if (per_node > 1) {
        terms.push_back({intra_node_budget(node, layout), (n - 1) / (k - 1), "intra-node"});
      }
      if (nodes > 1) terms.push_back({inter_node_budget(node, layout), (n - 1) / (k * (n - k)), "inter-node"});
      break;
    }
    case BusTraffic::ring:
      if (per_node > 1) terms.push_back({intra_node_budget(node, layout), 1.0, "intra-node"});
      if (nodes > 1) terms.push_back({inter_node_budget(node, layout), 1.0, "inter-node"});
      break;
  }
  const TheoreticalBusbw bound = bound_by_terms(terms);
  if (op != Collective::allreduce || !bound.spec_gbps) return bound;
  return best_allreduce(allreduce_busbw_by_algorithm(node, layout), bound);
}

std::vector<AlgorithmBusbw> allreduce_busbw_by_algorithm(const NodeTopology& node, const JobLayout& layout) {
  AllreduceInputs inputs;
  inputs.nodes = std::max(layout.nodes, 1);
  inputs.ranks_per_node = std::max(layout.ranks_per_node, 1);
  if (inputs.ranks_per_node > 1) inputs.intra = intra_node_budget(node, layout);
  if (inputs.nodes > 1) inputs.inter = inter_node_budget(node, layout);
  if ((inputs.ranks_per_node > 1 && !inputs.intra.spec_gbps) || (inputs.nodes > 1 && !inputs.inter.spec_gbps))
    return {};
  const UsedGpus used = used_gpus(node, layout);
  std::string why_not;
  if (inputs.ranks_per_node > 1 && used.indexes.size() > 1) inputs.nvls = nvls_support(node, used.indexes, why_not);
  inputs.infiniband = infiniband_fabric(node);
  return allreduce_algorithms(inputs);
}

}  // namespace commbench
