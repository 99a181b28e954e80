#include "commbench/analysis/local_node_model.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "commbench/topology/bandwidth_model.hpp"
#include "commbench/topology/link_spec.hpp"

namespace commbench {
namespace {

const Gpu* gpu_by_bus(const NodeTopology& topology, const std::string& bus_id) {
  for (const Gpu& gpu : topology.gpus)
    if (gpu.bus_id == bus_id) return &gpu;
  return nullptr;
}

std::optional<bool> nvlinked(const NodeTopology& topology, const std::string& first_bus, const std::string& second_bus) {
  const Gpu* first = gpu_by_bus(topology, first_bus);
  const Gpu* second = gpu_by_bus(topology, second_bus);
  if (first == nullptr || second == nullptr || first->nvlinks_unrecorded || second->nvlinks_unrecorded)
    return std::nullopt;
  bool first_on_switch = false, second_on_switch = false;
  for (const NvlinkGroup& group : topology.nvlinks) {
    if (group.gpu == first->index && group.peer == NvlinkPeer::gpu && group.remote_bus_id == second_bus) return true;
    if (group.peer != NvlinkPeer::nvswitch) continue;
    first_on_switch = first_on_switch || group.gpu == first->index;
    second_on_switch = second_on_switch || group.gpu == second->index;
  }
  return first_on_switch && second_on_switch;
}

LinkSpec pcie_spec(const NodeTopology& topology, const Gpu* gpu) {
  const PciObject* pci = gpu != nullptr && gpu->pci >= 0 ? &topology.pci[static_cast<std::size_t>(gpu->pci)] : nullptr;
  if (pci == nullptr || pci->link_gbps <= 0) return {std::nullopt, "the GPU's PCIe link is unknown to the topology probe"};
  const std::string link = pci->link_generation > 0 && pci->link_width > 0
                               ? fmt::format("PCIe Gen{} x{}", pci->link_generation, pci->link_width)
                               : std::string("PCIe");
  return {pci->link_gbps, fmt::format("{}: {} per direction", link, format_gbps(pci->link_gbps))};
}

}  // namespace

LocalNode describe_local_node(const NodeTopology* topology, std::string host, int rank,
                              std::vector<std::string> bus_ids, std::vector<std::vector<PeerAccess>> access) {
  LocalNode node;
  node.host = std::move(host);
  node.rank = rank;
  node.bus_ids = std::move(bus_ids);
  node.access = std::move(access);
  for (const std::string& bus : node.bus_ids) {
    const Gpu* known = topology != nullptr ? gpu_by_bus(*topology, bus) : nullptr;
    node.gpu_numa.push_back(known != nullptr ? known->numa : -1);
  }
  if (topology != nullptr)
    for (const NumaNode& numa : topology->numa_nodes) node.numa_nodes.push_back(numa.os_index);
  std::sort(node.numa_nodes.begin(), node.numa_nodes.end());
  return node;
}

std::vector<std::vector<std::optional<bool>>> nvlink_matrix(const NodeTopology* topology,
                                                            const std::vector<std::string>& bus_ids) {
  const std::size_t gpus = bus_ids.size();
  std::vector<std::vector<std::optional<bool>>> matrix(gpus, std::vector<std::optional<bool>>(gpus));
  if (topology == nullptr) return matrix;
  for (std::size_t source = 0; source < gpus; ++source)
    for (std::size_t destination = 0; destination < gpus; ++destination)
      if (source != destination) matrix[source][destination] = nvlinked(*topology, bus_ids[source], bus_ids[destination]);
  return matrix;
}

LinkSpec local_link_spec(const NodeTopology* topology, const std::string& probe_failure, const LocalNode& node,
                         const LocalLinkTest& test) {
  if (topology == nullptr) return {std::nullopt, "topology probe failed: " + probe_failure};
  const auto bus = [&](int gpu) { return node.bus_ids[static_cast<std::size_t>(gpu)]; };
  if (test.transfer == LocalTransfer::gpu_to_gpu) {
    const PathBudget budget = pair_budget(*topology, JobLayout{1, 2, {bus(test.source), bus(test.destination)}});
    std::string description = budget.description;
    if (!node.access[static_cast<std::size_t>(test.source)][static_cast<std::size_t>(test.destination)].supported)
      description += "; no peer access: staged through host memory";
    return {budget.spec_gbps, description};
  }
  LinkSpec spec = pcie_spec(*topology, gpu_by_bus(*topology, bus(test.gpu)));
  switch (test.role) {
    case HostMemoryRole::pinned_near: return spec;
    case HostMemoryRole::pinned_far:
      return {spec.gbps, spec.description + ", and the link between the NUMA nodes"};
    case HostMemoryRole::pageable:
      // The driver copies pageable memory through its own pinned buffer with the CPU: a
      // figure below the link's is what pageable memory costs, not a fault of the link.
      return {std::nullopt, spec.description + "; pageable memory is staged by the driver: not read against it"};
  }
  return {std::nullopt, spec.description};
}

void apply_link_spec(const LinkSpec& spec, PairCell& cell) {
  cell.theoretical_gbps = spec.gbps;
  if (spec.gbps && *spec.gbps > 0) cell.efficiency = cell.gbps / *spec.gbps;
  cell.link = spec.description + (cell.link.empty() ? "" : "; " + cell.link);
}

}  // namespace commbench
