#include "commbench/topology/gpu_ring.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <numeric>

#include "commbench/topology/bandwidth_model.hpp"
#include "commbench/topology/cpu_interconnect.hpp"
#include "commbench/topology/link_spec.hpp"
#include "commbench/topology/nvlink_rate.hpp"
#include "commbench/topology/pci_path.hpp"

namespace commbench {
namespace {

const Gpu& gpu_at(const NodeTopology& node, int gpu) { return node.gpus[static_cast<std::size_t>(gpu)]; }

// Exhaustive search is 8! orders for 9 GPUs; larger nodes are NVSwitch systems in practice.
constexpr std::size_t kMaxExhaustiveGpus = 9;

void cap_by_cpu_interconnect(const NodeTopology& node, GpuHop& hop) {
  const CpuInterconnect interconnect = nccl_cpu_interconnect(node.cpu_type);
  if (interconnect.achievable_gbps) {
    hop.achievable_gbps = std::min(hop.achievable_gbps, *interconnect.achievable_gbps);
    hop.crossing = fmt::format("crosses the CPU interconnect ({}: NCCL plans {})", interconnect.name,
                               format_gbps(*interconnect.achievable_gbps));
  } else {
    hop.crossing = "crosses the CPU interconnect, whose bandwidth is not modelled: " + interconnect.why_unknown;
  }
}

// NCCL charges the PCIe links 6/5 of a flow that turns in an Intel root complex, so the
// hop carries 5/6 of its PCIe figure; on an unknown CPU the PCIe figure stands and the
// basis says what an Intel CPU would make of it.
void charge_root_complex(const NodeTopology& node, GpuHop& hop) {
  const RootComplexTraffic traffic = nccl_root_complex_traffic(node.cpu_type);
  if (!traffic.pcie_charge) {
    hop.crossing =
        fmt::format("turns in a CPU root complex, where NCCL counts 6/5 of the traffic on an Intel CPU ({}; {})",
                    format_gbps(hop.achievable_gbps / kIntelRootComplexCharge), traffic.why_unknown);
    return;
  }
  if (*traffic.pcie_charge == 1.0) return;
  hop.achievable_gbps /= *traffic.pcie_charge;
  hop.crossing = fmt::format("turns in an Intel root complex (NCCL counts 6/5 of the traffic on its PCIe links: {})",
                             format_gbps(hop.achievable_gbps));
}

}  // namespace

GpuHop gpu_hop(const NodeTopology& node, int gpu_a, int gpu_b) {
  GpuHop hop;
  const Connection connection = classify(node, {Endpoint::Kind::gpu, gpu_a}, {Endpoint::Kind::gpu, gpu_b});
  hop.label = to_string(connection);
  if (connection.kind == PathClass::nvlink) {
    // The slower end decides: a link is as fast as the GPU that drives it more slowly.
    const NvlinkRate rate_a = nvlink_rate(gpu_at(node, gpu_a));
    const NvlinkRate rate_b = nvlink_rate(gpu_at(node, gpu_b));
    hop.nvlink = true;
    if (!rate_a.spec_gbps || !rate_b.spec_gbps) {
      hop.why_unknown = !rate_a.spec_gbps ? rate_a.why_unknown : rate_b.why_unknown;
      return hop;
    }
    hop.spec_gbps = connection.nvlinks * std::min(*rate_a.spec_gbps, *rate_b.spec_gbps);
    hop.achievable_gbps = std::min(nvlink_achievable_gbps(rate_a, connection.nvlinks),
                                   nvlink_achievable_gbps(rate_b, connection.nvlinks));
    return hop;
  }
  hop.spec_gbps = pci_path_bottleneck_gbps(node, gpu_at(node, gpu_a).pci, gpu_at(node, gpu_b).pci);
  hop.achievable_gbps = hop.spec_gbps * kNcclPcieFraction;
  if (hop.spec_gbps == 0) {
    hop.why_unknown = fmt::format("the PCIe path between GPU {} and GPU {} is unknown", gpu_at(node, gpu_a).index,
                                  gpu_at(node, gpu_b).index);
  }
  if (connection.kind == PathClass::sys) {
    cap_by_cpu_interconnect(node, hop);
  } else if (hop.spec_gbps > 0 && turns_in_root_complex(node, gpu_at(node, gpu_a).pci, gpu_at(node, gpu_b).pci)) {
    charge_root_complex(node, hop);
  }
  return hop;
}

void add_crossing(std::string& crossings, const std::string& crossing) {
  if (crossing.empty() || crossings.find(crossing) != std::string::npos) return;
  crossings += (crossings.empty() ? "" : " and ") + crossing;
}

bool all_pairs_nvlinked(const NodeTopology& node, const std::vector<int>& gpus) {
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    for (std::size_t j = i + 1; j < gpus.size(); ++j) {
      if (classify(node, {Endpoint::Kind::gpu, gpus[i]}, {Endpoint::Kind::gpu, gpus[j]}).kind != PathClass::nvlink)
        return false;
    }
  }
  return true;
}

std::optional<GpuRing> best_gpu_ring(const NodeTopology& node, const std::vector<int>& gpus, std::string& why) {
  if (gpus.size() < 2) return std::nullopt;
  // Hop figures once per ordered pair; the search then only compares numbers.
  const std::size_t count = gpus.size();
  std::vector<GpuHop> hops(count * count);
  for (std::size_t a = 0; a < count; ++a) {
    for (std::size_t b = 0; b < count; ++b) {
      if (a == b) continue;
      hops[a * count + b] = gpu_hop(node, gpus[a], gpus[b]);
      if (hops[a * count + b].spec_gbps == 0) {
        why = hops[a * count + b].why_unknown;
        return std::nullopt;
      }
    }
  }
  std::vector<std::size_t> order(count);
  std::iota(order.begin(), order.end(), 0);
  std::vector<std::size_t> best_order = order;
  const auto hop_after = [&](const std::vector<std::size_t>& ring, std::size_t i) -> const GpuHop& {
    return hops[ring[i] * count + ring[(i + 1) % count]];
  };
  const auto slowest_hop = [&](const std::vector<std::size_t>& ring) {
    std::size_t slowest = 0;
    for (std::size_t i = 1; i < count; ++i) {
      if (hop_after(ring, i).spec_gbps < hop_after(ring, slowest).spec_gbps) slowest = i;
    }
    return slowest;
  };
  const auto smallest_achievable = [&](const std::vector<std::size_t>& ring) {
    double smallest = hop_after(ring, 0).achievable_gbps;
    for (std::size_t i = 1; i < count; ++i) smallest = std::min(smallest, hop_after(ring, i).achievable_gbps);
    return smallest;
  };
  double best = -1;
  do {
    const double bound = hop_after(order, slowest_hop(order)).spec_gbps;
    if (bound > best) {
      best = bound;
      best_order = order;
    }
  } while (count <= kMaxExhaustiveGpus && std::next_permutation(order.begin() + 1, order.end()));
  GpuRing ring;
  const std::size_t at = slowest_hop(best_order);
  ring.slowest = hop_after(best_order, at);
  ring.slowest_from = gpus[best_order[at]];
  ring.slowest_to = gpus[best_order[(at + 1) % count]];
  ring.achievable_gbps = smallest_achievable(best_order);
  ring.nvlink_only = true;
  for (std::size_t i = 0; i < count; ++i) {
    ring.order.push_back(gpus[best_order[i]]);
    ring.nvlink_only = ring.nvlink_only && hop_after(best_order, i).nvlink;
    add_crossing(ring.crossing, hop_after(best_order, i).crossing);
  }
  return ring;
}

std::string describe(const NodeTopology& node, const GpuRing& ring) {
  std::string order;
  for (const int gpu : ring.order) order += fmt::format("{}{}", order.empty() ? "" : ">", gpu_at(node, gpu).index);
  std::string text =
      fmt::format("best ring {}: slowest hop GPU {} to GPU {} ({}) {}", order, gpu_at(node, ring.slowest_from).index,
                  gpu_at(node, ring.slowest_to).index, ring.slowest.label, format_gbps(ring.slowest.spec_gbps));
  if (!ring.crossing.empty()) text += "; the ring " + ring.crossing;
  return text;
}

PairwiseBound alltoall_pairwise_bound(const NodeTopology& node, const std::vector<int>& gpus, int total_ranks) {
  PairwiseBound bound;
  const double others = total_ranks - 1;
  for (const int gpu : gpus) {
    int shared_peers = 0;
    double shared_spec = 0, shared_achievable = 0;
    std::string crossing;
    const auto tighten = [&](double spec, double achievable, const std::string& text) {
      if (!bound.spec_gbps || spec < *bound.spec_gbps) {
        bound.spec_gbps = spec;
        bound.description = text;
      }
      bound.achievable_gbps = bound.achievable_gbps ? std::min(*bound.achievable_gbps, achievable) : achievable;
    };
    for (const int peer : gpus) {
      if (peer == gpu) continue;
      const GpuHop hop = gpu_hop(node, gpu, peer);
      if (hop.spec_gbps == 0) return {std::nullopt, std::nullopt, hop.why_unknown};
      if (hop.nvlink) {
        tighten(hop.spec_gbps * others, hop.achievable_gbps * others,
                fmt::format("GPU {} to GPU {}: {} {} x {}", gpu_at(node, gpu).index, gpu_at(node, peer).index,
                            hop.label, format_gbps(hop.spec_gbps), others));
        continue;
      }
      // Peers without NVLink all leave through this GPU's PCIe link: its narrowest path bounds them.
      shared_spec = shared_peers == 0 ? hop.spec_gbps : std::min(shared_spec, hop.spec_gbps);
      shared_achievable = shared_peers == 0 ? hop.achievable_gbps : std::min(shared_achievable, hop.achievable_gbps);
      add_crossing(crossing, hop.crossing);
      ++shared_peers;
    }
    if (shared_peers > 0) {
      tighten(shared_spec * others / shared_peers, shared_achievable * others / shared_peers,
              fmt::format("GPU {} reaches {} of its {} peers without NVLink: PCIe {} shared x {}/{}{}",
                          gpu_at(node, gpu).index, shared_peers, gpus.size() - 1, format_gbps(shared_spec), others,
                          shared_peers, crossing.empty() ? "" : "; the path " + crossing));
    }
  }
  return bound;
}

}  // namespace commbench
