// Finding the bad node: facts that should be equal on every node of a homogeneous cluster
// (GPU count, NVLinks, PCIe links, NIC ports), compared against the majority; and, within
// one node, devices that are worse than their peers (a GPU trained down, a port down).
#pragma once

#include <string>
#include <vector>

#include "commbench/topology/node_topology.hpp"

namespace commbench {

struct NodeFact {
  std::string key;    // stable identity: "gpu 3 pcie"
  std::string value;  // "63 GB/s", "Gen5 x16", "18", "ACTIVE 400 Gb/s"
};

std::vector<NodeFact> node_facts(const NodeTopology& node);

struct NodeDifference {
  std::string hostname;
  std::string key;
  std::string value;     // this node's value ("absent" when it lacks the fact)
  std::string majority;  // the value most nodes have
  int majority_nodes = 0;
  int nodes = 0;
};

// Every fact of every node that differs from the majority value of that fact across the
// nodes. Ties are broken toward the lexicographically smallest value, so the result does
// not depend on node order; with fewer than 3 nodes a tie means no majority and both
// nodes are reported.
std::vector<NodeDifference> compare_nodes(const std::vector<NodeTopology>& nodes);
std::string describe(const NodeDifference& difference);

// Devices of one node that are worse than they should be: a GPU PCIe link below the best
// of the node's GPUs of the same model, or below its own maximum (NVML); a GPU with fewer
// NVLinks than its peers; a compute RDMA port (nic_roles) not ACTIVE; an active port
// slower than the ports of its own role and kind (link layer and device).
std::vector<std::string> node_findings(const NodeTopology& node);

}  // namespace commbench
