// Rings and pairs over GPUs that are not all NVLinked to each other. On a partial NVLink
// mesh (NVLink bridges on pairs of PCIe cards, the DGX-1 hybrid cube-mesh) a ring through
// every GPU may have to cross PCIe or the CPU interconnect, and its slowest hop bounds the
// whole ring; an all-to-all sends to every peer, so peers without NVLink share the GPU's
// PCIe link.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "commbench/topology/node_topology.hpp"

namespace commbench {

// The link between two GPUs (indexes into node.gpus) for one flow, per direction.
struct GpuHop {
  double spec_gbps = 0;  // 0 when unknown
  double achievable_gbps = 0;
  bool nvlink = false;
  std::string label;  // "NV12", "SYS", ...
  std::string why_unknown;
  // What the CPU does to the hop's achievable figure (the spec stays the PCIe path's):
  // between sockets, what NCCL lets the CPU interconnect carry; through an Intel root
  // complex, NCCL's 6/5 charge on the PCIe links; or why that is unknown.
  std::string crossing;
};
GpuHop gpu_hop(const NodeTopology& node, int gpu_a, int gpu_b);

// Adds a hop's crossing to a list of distinct ones ("crosses ... and turns in ...").
void add_crossing(std::string& crossings, const std::string& crossing);

// Whether every pair of the GPUs reaches each other over NVLink (directly or through NVSwitch).
bool all_pairs_nvlinked(const NodeTopology& node, const std::vector<int>& gpus);

struct GpuRing {
  std::vector<int> order;  // indexes into node.gpus, starting with the first of `gpus`
  GpuHop slowest;          // the hop that bounds the ring's spec figure
  int slowest_from = 0, slowest_to = 0;
  double achievable_gbps = 0;  // the smallest achievable figure over the hops
  std::string crossing;        // every distinct GpuHop::crossing of its hops, in ring order
  bool nvlink_only = false;    // every hop is NVLink
};

// The ring through every GPU whose slowest hop is fastest (spec figures; exhaustive up to
// 9 GPUs, bus order beyond). nullopt when a hop's bandwidth is unknown; `why` says which.
std::optional<GpuRing> best_gpu_ring(const NodeTopology& node, const std::vector<int>& gpus, std::string& why);
std::string describe(const NodeTopology& node, const GpuRing& ring);

// The bound an all-to-all puts on busbw inside a node when some GPU pairs have no NVLink:
// per GPU, a peer behind its own NVLinks gets them for its 1/n share (busbw <= B x (n-1)),
// and the m peers without NVLink share the narrowest PCIe path (busbw <= B x (n-1) / m).
struct PairwiseBound {
  std::optional<double> spec_gbps, achievable_gbps;
  std::string description;
};
PairwiseBound alltoall_pairwise_bound(const NodeTopology& node, const std::vector<int>& gpus, int total_ranks);

}  // namespace commbench
