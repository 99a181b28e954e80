// A cost model from the bandwidth model (--predict without --from): a collective over a
// group takes its latency term plus bytes x bus factor / the achievable busbw that
// theoretical_busbw gives for the group's layout on this node's topology (every node
// assumed like this one). The latency term, documented in docs/patterns.md, follows
// NCCL's own tuning model in spirit: a base latency per collective plus one hop latency
// per algorithm step — 2 x ceil(log2 n) steps for allreduce (the tree NCCL picks at
// scale), n - 1 for the ring collectives, 1 for a send/recv — with NCCL's LL-protocol hop
// latencies for NVLink inside a node and the network between nodes.
#pragma once

#include <map>
#include <string>
#include <tuple>

#include "commbench/pattern/communication_cost.hpp"
#include "commbench/topology/bandwidth_model.hpp"
#include "commbench/topology/node_topology.hpp"

namespace commbench {

inline constexpr double kCollectiveBaseLatencySeconds = 6.6e-6;  // NCCL's ring base latency (LL)
inline constexpr double kIntraNodeHopLatencySeconds = 0.6e-6;    // NCCL's NVLink hop latency (LL)
inline constexpr double kInterNodeHopLatencySeconds = 5.0e-6;    // NCCL's network hop latency (LL)

// Algorithm steps the latency term counts for `op` over `ranks`.
int latency_steps(Collective op, int ranks);

class BandwidthCostModel : public CommunicationCostModel {
 public:
  // `gpus_per_node`: ranks per node; the node's first that many GPUs are the job's.
  BandwidthCostModel(NodeTopology node, int gpus_per_node);

  // UsageError naming the op and the group when the model has no achievable figure.
  double seconds(const CommunicationCostQuery& query) const override;
  std::string basis() const override;
  // The bandwidth model's figure for a group (what the report shows as theory).
  TheoreticalBusbw figure(Collective op, int ranks, int nodes) const;

 private:
  NodeTopology node_;
  int gpus_per_node_ = 1;
  mutable std::map<std::tuple<Collective, int, int>, TheoreticalBusbw> figures_;
};

}  // namespace commbench
