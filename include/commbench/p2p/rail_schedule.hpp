// The per-rail schedule of bench-p2p (--per-rail): only ranks of different nodes with the
// same place on their node meet (GPU i of node A with GPU i of node B). On a
// rail-optimised fabric GPU i's NIC is cabled to switch i, so each pair's traffic
// crosses exactly one rail, and a slow NIC or cable shows as one rank's row and column
// instead of being averaged with its node's other NICs. Pure functions.
#pragma once

#include <string>
#include <vector>

#include "commbench/p2p/pair_schedule.hpp"

namespace commbench {

// The job's ranks grouped by node: nodes in order of their first rank, each node's ranks
// ascending. A rank's rail is its index in its node's list.
struct NodeRanks {
  std::vector<std::string> hosts;          // one per node
  std::vector<std::vector<int>> ranks;     // ranks[node] = that node's ranks, ascending
  std::vector<int> rail_of_rank;           // rail_of_rank[rank] = its index on its node
};
NodeRanks group_ranks_by_node(const std::vector<std::string>& rank_hosts);

// The rank rounds of `node_rounds` (rounds of disjoint node pairs, from pair_rounds over
// the node count): a node pair (a, b) becomes the rank pairs (ranks[a][i], ranks[b][i]) for
// every rail i both nodes have. Every rail of a node pair runs in the same round: each
// uses its own NIC. Node pairs whose nodes share no rail add nothing; empty rounds are
// dropped.
std::vector<PairRound> rail_rounds(const std::vector<PairRound>& node_rounds, const NodeRanks& nodes);

}  // namespace commbench
