// What bench-topology prints for a node: the `nvidia-smi topo -m`-style matrix of GPUs and
// NICs, an ibstat-like NIC table, and the links as CSV rows.
#pragma once

#include <string>
#include <vector>

#include "commbench/core/record.hpp"
#include "commbench/topology/node_topology.hpp"

namespace commbench {

// "0-3,8-11" from {0,1,2,3,8,9,10,11}; "N/A" when empty.
std::string format_cpu_list(const std::vector<int>& cpus);

// Rows and columns GPU0..GPUn-1 then NIC0..NICm-1 (RDMA NICs only), then CPU and NUMA
// affinity columns, a legend and the NIC names.
std::string render_matrix(const NodeTopology& node);

// One line per NIC port: name, port, state, physical state, rate, link layer, bus id,
// NUMA node, network devices.
std::string render_nic_table(const NodeTopology& node);

// A row per link: PCIe link of each GPU and NIC, NVLink groups, NIC ports.
struct LinkRow {
  std::string host, from, to, type;  // type: "PCIe", "NVLink", "InfiniBand", "Ethernet"
  int count = 0;                     // lanes or links; 0 unknown
  double spec_gbps = 0;              // per direction; 0 unknown
  std::string state;                 // NIC port state, "" for other links
};
std::vector<LinkRow> link_rows(const NodeTopology& node);
// The link as a record of kind "link" (core/record.hpp): an unknown count or spec is empty.
Record link_record(const LinkRow& row);

// Matrix entries, as text, for programs and tests: entry[i][j] for the endpoints in
// matrix order (GPUs then RDMA NICs).
std::vector<std::vector<std::string>> matrix_entries(const NodeTopology& node);

}  // namespace commbench
