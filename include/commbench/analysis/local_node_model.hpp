// What a node's topology says about the links bench-p2p --local measures: the node as the
// plan sees it (each GPU's NUMA node, the host's NUMA nodes), which GPU pairs are joined
// by NVLink, and the spec each cell is read against. Pure: the tests feed it real
// topology dumps.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "commbench/p2p/local_link_plan.hpp"
#include "commbench/p2p/pair_matrix.hpp"
#include "commbench/topology/node_topology.hpp"

namespace commbench {

// The node's GPUs in CUDA's order (`bus_ids`, with the runtime's peer `access`), their NUMA
// nodes and the host's from `topology` (none known without one).
LocalNode describe_local_node(const NodeTopology* topology, std::string host, int rank,
                              std::vector<std::string> bus_ids, std::vector<std::vector<PeerAccess>> access);

// [source][destination]: true where the topology joins the two GPUs by NVLink (to each
// other, or both to NVSwitches), false where it records none, nullopt where it cannot say.
std::vector<std::vector<std::optional<bool>>> nvlink_matrix(const NodeTopology* topology,
                                                            const std::vector<std::string>& bus_ids);

struct LinkSpec {
  std::optional<double> gbps;  // per direction
  std::string description;
};

// A GPU pair: the bandwidth model's pair budget (and a note where peer access is off).
// Host transfers: the GPU's PCIe link as the probe recorded it on the GPU's PCI device
// (the maximum generation at the current width, so an idle GPU's power saving does not
// lower it); pinned-far adds the link between NUMA nodes; pageable has no spec. Without a
// topology: none, and `probe_failure` says why.
LinkSpec local_link_spec(const NodeTopology* topology, const std::string& probe_failure, const LocalNode& node,
                         const LocalLinkTest& test);

// The spec and efficiency into a cell, the spec's description before what the timing said.
void apply_link_spec(const LinkSpec& spec, PairCell& cell);

}  // namespace commbench
