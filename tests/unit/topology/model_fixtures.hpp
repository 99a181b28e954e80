// Loading the bandwidth model's NCCL-dump fixtures (tests/fixtures/topology/model) and the
// layouts the tests model on them.
#pragma once

#include <string>
#include <vector>

#include "commbench/topology/bandwidth_model.hpp"
#include "commbench/topology/nccl_topo_xml.hpp"

namespace commbench::test {

inline NodeTopology model_fixture(const std::string& name) {
  return load_nccl_topo_xml(std::string(COMMBENCH_TOPOLOGY_FIXTURES) + "/model/" + name);
}

// A layout over the GPUs with these positions in node.gpus (all of them when empty).
inline JobLayout gpu_layout(const NodeTopology& node, int nodes, const std::vector<int>& positions = {}) {
  JobLayout layout;
  layout.nodes = nodes;
  for (std::size_t g = 0; g < node.gpus.size(); ++g) {
    if (positions.empty() || std::find(positions.begin(), positions.end(), static_cast<int>(g)) != positions.end())
      layout.gpu_bus_ids.push_back(node.gpus[g].bus_id);
  }
  layout.ranks_per_node = static_cast<int>(layout.gpu_bus_ids.size());
  return layout;
}

// What a live probe (libibverbs, sysfs) adds to a dump: port state and link layer. NCCL's
// dump says neither, so the tests that need inter-node figures state them.
inline void ports_active(NodeTopology& node, const std::string& link_layer) {
  for (Nic& nic : node.nics) {
    for (NicPort& port : nic.ports) {
      port.state_code = 4;
      port.state = "ACTIVE";
      port.link_layer = link_layer;
    }
  }
}

}  // namespace commbench::test
