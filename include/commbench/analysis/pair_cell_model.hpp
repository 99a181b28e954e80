// The spec of a bench-p2p cell between two ranks, from the reporting node's model: the
// GPUs' own path inside a node; between nodes the NICs NCCL gives the sending GPU among the
// GPUs of its host's ranks (its share of the NICs on its switch), for host ranks the
// fastest compute port. Pure: the ranks' hosts and GPUs come as gathered.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "commbench/p2p/pair_matrix.hpp"
#include "commbench/topology/node_topology.hpp"

namespace commbench {

// Sets the cell's theoretical_gbps, efficiency and link. `bus_ids` and `hostnames` are per
// rank (a bus id empty for a host-memory rank); without a model the link says why.
void apply_link_model(const std::optional<NodeTopology>& node, const std::string& probe_failure,
                      const std::vector<std::string>& bus_ids, const std::vector<std::string>& hostnames,
                      PairCell& cell);

}  // namespace commbench
