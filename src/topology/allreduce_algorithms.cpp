#include "commbench/topology/allreduce_algorithms.hpp"

#include <fmt/format.h>
#include <algorithm>

#include "commbench/core/number_text.hpp"
#include "commbench/topology/link_spec.hpp"
#include "commbench/topology/nvlink_rate.hpp"
#include "commbench/topology/nvls_plan.hpp"
#include "commbench/topology/pci_path.hpp"

namespace commbench {
namespace {

// NCCL's model refinements (src/graph/tuning.cc): the tree's allreduce efficiency, and
// NVLS's per generation (nvlsEfficiency).
constexpr double kNcclTreeEfficiency = 0.92;
constexpr double kNcclNvlsHopper = 0.85;
constexpr double kNcclNvlsBlackwell = 0.74;

std::string figure(double gbps) { return significant_text(gbps, 4); }

double min_of(std::optional<double> a, double b) { return a ? std::min(*a, b) : b; }

}  // namespace

std::optional<NvlsSupport> nvls_support(const NodeTopology& node, const std::vector<int>& gpus, std::string& why_not) {
  NvlsSupport support;
  support.blackwell = true;
  for (const int index : gpus) {
    const Gpu& gpu = node.gpus[static_cast<std::size_t>(index)];
    const int switch_links = nvlinks_to_switches(node, index);
    if (switch_links == 0) {
      why_not = fmt::format("GPU {} has no NVSwitch link", gpu.index);
      return std::nullopt;
    }
    // NVLink SHARP came with the third NVSwitch generation, which Hopper (NVLink 4) drives.
    const bool hopper_or_later = gpu.sm >= 90 || (gpu.sm == 0 && gpu.nvlink_generation >= 4);
    if (!hopper_or_later) {
      why_not = fmt::format("GPU {} is older than Hopper: its NVSwitches do not reduce", gpu.index);
      return std::nullopt;
    }
    const NvlinkRate rate = nvlink_rate(gpu);
    if (!rate.spec_gbps) {
      why_not = rate.why_unknown;
      return std::nullopt;
    }
    const double spec = switch_links * *rate.spec_gbps;
    if (support.spec_gbps_per_gpu == 0 || spec < support.spec_gbps_per_gpu) {
      support.spec_gbps_per_gpu = spec;
      support.achievable_gbps_per_gpu = switch_links * *rate.achievable_gbps;
      support.description = fmt::format("GPU {}: {} NVSwitch links x {} GB/s = {}", gpu.index, switch_links,
                                        figure(*rate.spec_gbps), format_gbps(spec));
    }
    support.blackwell = support.blackwell && (gpu.sm >= 100 || (gpu.sm == 0 && gpu.nvlink_generation >= 5));
  }
  // NCCL indexes nvlsEfficiency by the job's lowest compute capability: one Hopper among
  // Blackwells keeps Hopper's figure.
  support.efficiency = support.blackwell ? kNcclNvlsBlackwell : kNcclNvlsHopper;
  return support;
}

namespace {

// The layout as the formulas see it: n ranks, k of them per node, and what one algbw
// costs a ring and a tree's network hop.
struct LayoutShape {
  int nodes;
  int k;
  double n;
  bool local, across;
  double ring_factor;  // busbw per algbw
  // Per node the network carries the buffer once each way on two nodes (double binary tree:
  // each node is the other's parent in one tree), twice beyond; NCCL models the two-node
  // case with twice the network bandwidth.
  double tree_net_factor;
  double nccl_net_factor;
};

LayoutShape shape_of(const AllreduceInputs& in) {
  const int nodes = std::max(in.nodes, 1), k = std::max(in.ranks_per_node, 1);
  const double n = static_cast<double>(nodes) * k;
  const double ring_factor = 2 * (n - 1) / n;
  return {.nodes = nodes,
          .k = k,
          .n = n,
          .local = k > 1,
          .across = nodes > 1,
          .ring_factor = ring_factor,
          .tree_net_factor = nodes == 2 ? ring_factor : ring_factor / 2,
          .nccl_net_factor = nodes == 2 ? 2.0 : 1.0};
}

// NCCL's own NVLS plan: k channels at a speed of its table (nvls_plan.hpp), and how the
// achievable figures of NVLS and NVLS-tree begin their text.
struct PlannedNvls {
  std::optional<NvlsPlan> plan;
  std::string text;
};

PlannedNvls planned_nvls(const AllreduceInputs& in, int k) {
  PlannedNvls planned;
  planned.plan = in.nvls ? nccl_nvls_plan(in.nvls->achievable_gbps_per_gpu, k, in.nvls->blackwell, in.nvls->efficiency)
                         : std::nullopt;
  const std::optional<NvlsPlan>& plan = planned.plan;
  planned.text = plan ? fmt::format("NCCL plans {} channels at {} GB/s, x {} (its NVLS efficiency) x 2(k-1)/k",
                                    plan->channels, figure(plan->channel_gbps), figure(in.nvls->efficiency))
                      : std::string("no speed of NCCL's table fits k+1 times into a GPU's NVSwitch links");
  return planned;
}

// Ring: every rank sends and receives 2(n-1)/n of the buffer, so busbw is the link rate;
// a ring crosses each node boundary once per direction, so a node's NICs carry it.
AlgorithmBusbw ring_busbw(const AllreduceInputs& in, const LayoutShape& shape) {
  AlgorithmBusbw ring{"ring", std::nullopt, std::nullopt, ""};
  std::string ring_basis;
  if (shape.local) {
    ring.spec_gbps = *in.intra.spec_gbps;
    ring.achievable_gbps = *in.intra.achievable_gbps;
    ring_basis = "intra-node: " + in.intra.description;
  }
  if (shape.across) {
    ring.spec_gbps = min_of(ring.spec_gbps, *in.inter.spec_gbps);
    ring.achievable_gbps = min_of(ring.achievable_gbps, *in.inter.achievable_gbps);
    ring_basis += (ring_basis.empty() ? "" : "; ") + std::string("inter-node: ") + in.inter.description;
  }
  ring.basis = (shape.local && shape.across ? "min of " : "") + ring_basis;
  return ring;
}

// NVLS on one node: each GPU sends its buffer into the switches and a reduced 1/k of it,
// and receives as much back: (k+1)/k of the buffer per direction, busbw <= B x 2(k-1)/(k+1).
AlgorithmBusbw nvls_busbw(const AllreduceInputs& in, const LayoutShape& shape, const PlannedNvls& planned) {
  const int k = shape.k;
  const std::optional<NvlsPlan>& plan = planned.plan;
  const double factor = 2.0 * (k - 1) / (k + 1);
  std::optional<double> achievable;
  std::string achievable_text = planned.text;
  if (plan) {
    achievable = plan->one_node_busbw();
    if (plan->second_speed_gbps < plan->reduced_per_channel)
      achievable_text +=
          fmt::format(", at most {} GB/s per channel (the graph's second speed)", figure(plan->second_speed_gbps));
    achievable_text += " = " + format_gbps(*achievable);
  }
  return {"NVLS", in.nvls->spec_gbps_per_gpu * factor, achievable,
          fmt::format("NVLink SHARP (the NVSwitches reduce): {} x 2(k-1)/(k+1) = {}; achievable: {}",
                      in.nvls->description, format_gbps(in.nvls->spec_gbps_per_gpu * factor), achievable_text)};
}

// Tree between nodes: within a node a chain carries the buffer up and down (busbw <= B x (n-1)/n).
AlgorithmBusbw tree_busbw(const AllreduceInputs& in, const LayoutShape& shape) {
  const double n = shape.n;
  AlgorithmBusbw tree{"tree", *in.inter.spec_gbps * shape.tree_net_factor,
                      *in.inter.achievable_gbps * shape.nccl_net_factor, ""};
  if (shape.local) {
    tree.spec_gbps = std::min(*tree.spec_gbps, *in.intra.spec_gbps * (n - 1) / n);
    tree.achievable_gbps = std::min(*tree.achievable_gbps, *in.intra.achievable_gbps);
  }
  *tree.achievable_gbps *= kNcclTreeEfficiency * (n - 1) / n;
  tree.basis = fmt::format("double binary tree over {} nodes: NICs {} x {}{}", shape.nodes,
                           format_gbps(*in.inter.spec_gbps), figure(shape.tree_net_factor),
                           shape.local ? fmt::format(", chain inside the node {} x {}",
                                                     format_gbps(*in.intra.spec_gbps), figure((n - 1) / n))
                                       : std::string());
  return tree;
}

// NVLS inside each node, a tree between nodes: the switches move (k+1)/k of the buffer per
// GPU, the NICs what a tree moves. NCCL counts per channel the smallest of NVLS's figure,
// the network's (doubled on two nodes) and a cap per generation and node count.
AlgorithmBusbw nvls_tree_busbw(const AllreduceInputs& in, const LayoutShape& shape, const PlannedNvls& planned) {
  const int k = shape.k;
  const std::optional<NvlsPlan>& plan = planned.plan;
  const double intra_factor = shape.ring_factor * k / (k + 1);
  std::optional<double> achievable;
  std::string achievable_text = planned.text;
  if (plan) {
    const double cap = nccl_nvls_tree_channel_cap(shape.nodes, in.nvls->blackwell);
    achievable = std::min({plan->channels * plan->reduced_per_channel,
                           *in.inter.achievable_gbps * shape.nccl_net_factor, plan->channels * cap});
    achievable_text += fmt::format(", NICs {} x {}, at most {} GB/s per channel (NCCL's NVLS-tree cap) = {}",
                                   format_gbps(*in.inter.achievable_gbps), figure(shape.nccl_net_factor), figure(cap),
                                   format_gbps(*achievable));
  }
  return {"NVLS-tree", std::min(in.nvls->spec_gbps_per_gpu * intra_factor, *in.inter.spec_gbps * shape.tree_net_factor),
          achievable,
          fmt::format("NVLink SHARP inside the node ({} x {}), tree between {} nodes (NICs {} x {}); achievable: {}",
                      format_gbps(in.nvls->spec_gbps_per_gpu), figure(intra_factor), shape.nodes,
                      format_gbps(*in.inter.spec_gbps), figure(shape.tree_net_factor), achievable_text)};
}

// SHARP in the InfiniBand switches: each node sends its reduced buffer once and gets the
// result once, whatever the node count (on two nodes the tree already does). Whether the
// switches offer it cannot be seen from a node, so it only raises the bound, never the
// achievable figure.
AlgorithmBusbw collnet_busbw(const AllreduceInputs& in, const LayoutShape& shape) {
  const int k = shape.k;
  const double n = shape.n, ring_factor = shape.ring_factor;
  const double intra_spec = in.nvls ? in.nvls->spec_gbps_per_gpu * ring_factor * k / (k + 1)
                                    : (shape.local ? *in.intra.spec_gbps * k * (n - 1) / ((k - 1) * n) : 0);
  const double net_spec = *in.inter.spec_gbps * ring_factor;
  return {"CollNet", intra_spec > 0 ? std::min(intra_spec, net_spec) : net_spec, std::nullopt,
          fmt::format("SHARP in the InfiniBand switches, if the fabric offers it: NICs {} x {}",
                      format_gbps(*in.inter.spec_gbps), figure(ring_factor))};
}

}  // namespace

std::vector<AlgorithmBusbw> allreduce_algorithms(const AllreduceInputs& in) {
  const LayoutShape shape = shape_of(in);
  const PlannedNvls planned = planned_nvls(in, shape.k);
  std::vector<AlgorithmBusbw> algorithms{ring_busbw(in, shape)};
  if (in.nvls && !shape.across && shape.local) algorithms.push_back(nvls_busbw(in, shape, planned));
  if (shape.across) algorithms.push_back(tree_busbw(in, shape));
  if (in.nvls && shape.across && shape.local) algorithms.push_back(nvls_tree_busbw(in, shape, planned));
  if (in.infiniband && shape.nodes > 2) algorithms.push_back(collnet_busbw(in, shape));
  return algorithms;
}

}  // namespace commbench
