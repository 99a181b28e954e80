// The algorithms NCCL can run an allreduce with, and the busbw each can reach on a layout.
// busbw is nccl-tests' algbw x 2(n-1)/n whatever the algorithm, so an algorithm that moves
// less data than a ring (NVLink SHARP reduces in the switch, a tree crosses the network
// once per node on two nodes, SHARP reduces in the IB switches) reads above the link
// rate. The spec figure must bound every algorithm NCCL may pick, so it is the largest of
// them; formulas and sources are in docs/bandwidth-model.md.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "commbench/topology/bandwidth_model.hpp"

namespace commbench {

// NVLink SHARP: every GPU of the node on NVSwitches of the third generation or later
// (Hopper and newer); the switches reduce and multicast.
struct NvlsSupport {
  double spec_gbps_per_gpu = 0;        // NVLink bandwidth of the narrowest GPU into the switches
  double achievable_gbps_per_gpu = 0;  // the same with NCCL's per-link figure
  double efficiency = 0;               // NCCL's nvlsEfficiency: 0.85 Hopper, 0.74 Blackwell
  bool blackwell = false;              // every GPU Blackwell or later: NCCL's speed table and caps
  std::string description;
};
std::optional<NvlsSupport> nvls_support(const NodeTopology& node, const std::vector<int>& gpus, std::string& why_not);

struct AllreduceInputs {
  int nodes = 1;
  int ranks_per_node = 1;
  PathBudget intra;  // ring budget inside a node (used when ranks_per_node > 1)
  PathBudget inter;  // a node's compute NICs (used when nodes > 1)
  std::optional<NvlsSupport> nvls;
  bool infiniband = false;  // the compute fabric is InfiniBand, where SHARP (CollNet) may exist
};

struct AlgorithmBusbw {
  std::string algorithm;  // "ring", "tree", "NVLS", "NVLS-tree", "CollNet"
  std::optional<double> spec_gbps;
  std::optional<double> achievable_gbps;  // nullopt where NCCL's use cannot be known (CollNet)
  std::string basis;
};

// Every algorithm the layout enables, ring first; the ring is always there. Known terms
// are required: callers check intra/inter before.
std::vector<AlgorithmBusbw> allreduce_algorithms(const AllreduceInputs& inputs);

}  // namespace commbench
