// The bus bandwidth a job's layout should reach: the bottleneck of the links a collective
// crosses, as a spec figure (signalling rate after encoding: never exceeded) and as an
// achievable figure (what NCCL's own topology model assumes a link delivers). Formulas
// and sources are in docs/bandwidth-model.md.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "commbench/core/collective.hpp"
#include "commbench/topology/node_topology.hpp"

namespace commbench {

struct JobLayout {
  int nodes = 1;
  int ranks_per_node = 1;
  // PCI bus ids of the GPUs one node's ranks drive (every node alike); empty when the
  // ranks work in host memory (MPI backend).
  std::vector<std::string> gpu_bus_ids;
};

struct TheoreticalBusbw {
  std::optional<double> spec_gbps;
  std::optional<double> achievable_gbps;
  std::string basis;      // the bottleneck and its figures, or why nothing can be said
  std::string algorithm;  // the NCCL algorithm the spec figure is for: "ring", "NVLS", "tree", ...
};

// One path class of a layout: the links inside a node, or the NICs between nodes.
struct PathBudget {
  std::optional<double> spec_gbps;
  std::optional<double> achievable_gbps;
  std::string description;  // "NVLink 4: 18 links x 25 GB/s per GPU" or why it is unknown
};

// Per-GPU bandwidth inside a node for ring-like traffic (every GPU sends and receives at
// the rate): NVLink to switches and to the other GPUs of the job when rings can stay on
// NVLink; on a partial NVLink mesh the slowest hop of the best ring; without NVLink the
// narrowest PCIe link on the ring through the GPUs in bus order.
PathBudget intra_node_budget(const NodeTopology& node, const JobLayout& layout);
// Between two neighbouring GPUs (sendrecv): the NVLinks they share or their PCIe path.
PathBudget pair_budget(const NodeTopology& node, const JobLayout& layout);
// A node's NIC bandwidth toward other nodes: the active ports of the compute NICs
// (nic_roles) nearest (PIX/PXB) to the job's GPUs, or all active compute RDMA ports, or for
// host ranks the fastest compute port.
PathBudget inter_node_budget(const NodeTopology& node, const JobLayout& layout);
// The same ports counted: how many, and their mean spec rate (one port's rate where all are
// alike). No active rated port: 0 and nullopt.
struct NodeNetworkPorts {
  int ports = 0;
  std::optional<double> port_gbps;
};
NodeNetworkPorts inter_node_ports(const NodeTopology& node, const JobLayout& layout);
// One GPU's flow between nodes (sendrecv): the NICs NCCL gives the node's boundary GPUs
// (topology/gpu_nics), each at most its PCIe path, together at most the GPU's own PCIe
// link; for host ranks the fastest compute port.
PathBudget single_nic_budget(const NodeTopology& node, const JobLayout& layout);
// One GPU of the layout sending or receiving between nodes (a cell of a pair matrix):
// the NICs NCCL gives it among the layout's GPUs, as single_nic_budget counts them.
PathBudget gpu_network_budget(const NodeTopology& node, const JobLayout& layout, const std::string& gpu_bus_id);

// The bound of a collective on a layout. AllReduce takes the best of the algorithms the
// layout enables (ring, tree, NVLS, NVLS-tree, CollNet: allreduce_algorithms.hpp), so
// the spec figure bounds whichever NCCL picks; the other collectives run as rings.
TheoreticalBusbw theoretical_busbw(Collective op, const NodeTopology& node, const JobLayout& layout);

struct AlgorithmBusbw;  // allreduce_algorithms.hpp
// Every allreduce algorithm the layout enables with its own figures, ring first (what
// NCCL_ALGO=... would reach); empty when a path budget is unknown.
std::vector<AlgorithmBusbw> allreduce_busbw_by_algorithm(const NodeTopology& node, const JobLayout& layout);

// What NCCL's topology model assumes one link delivers, per direction, in GB/s.
// By generation; nvlink_rate() is the figure per GPU (sm_86 parts get 12).
double nccl_model_nvlink_gbps(int generation);              // 18, 20, 20, 20.6, 40.1 for NVLink 1..5
inline constexpr double kNcclPcieFraction = 12.0 / 15.75;   // NCCL's 12 GB/s for PCIe Gen3 x16
// NCCL plans channels between nodes at table speeds (src/graph/search.cc): 12, 24, 48, 96
// for 100G, 200G, 400G, 800G ports, each 0.96 of the port (docs/bandwidth-model.md).
inline constexpr double kNetworkAchievableFraction = 0.96;

}  // namespace commbench
