// The bandwidth model for a bench-collectives run: what each collective's busbw should
// reach with this job's layout, so every row reads "achieved X of a theoretical Y".
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "commbench/backend/backend.hpp"
#include "commbench/core/collective.hpp"
#include "commbench/core/result_row.hpp"
#include "commbench/topology/bandwidth_model.hpp"

namespace commbench {

using CollectiveBandwidths = std::map<Collective, TheoreticalBusbw>;

// Rank 0 probes its node (other nodes are assumed alike: bench-topology checks that) and
// models the layout of `backend`'s group: nodes, ranks per node and the GPUs they drive.
// Every rank returns the same answer. A probe failure only makes the model unknown (with
// the reason in the basis); it never fails the benchmark.
// `probed`, when given, receives the node rank 0 probed (nullopt when the probe failed).
CollectiveBandwidths model_collective_bandwidths(Backend& backend, const std::vector<Collective>& ops,
                                                 std::optional<NodeTopology>* probed = nullptr);

// Rank 0 of `group` probes its node; every rank gets it, or nullopt and the same
// `failure` on every rank. Collective.
std::optional<NodeTopology> probe_reporting_node(Bootstrap& group, std::string& failure);
// The layout of `backend`'s group as the model sees it: its nodes, and the ranks and GPUs
// of its members on its first rank's node. Collective over the group.
JobLayout layout_of_group(Backend& backend);
// The layout of the ranks on `host`, from what every rank knows: the processes there
// (by `hostnames`, one per process) times `ranks_per_process`, and the GPUs they drive
// (each process's bus ids in `bus_ids_of_process`, none for host memory), as one node of
// `nodes`.
JobLayout layout_on_host(const std::vector<std::string>& hostnames,
                         const std::vector<std::vector<std::string>>& bus_ids_of_process, const std::string& host,
                         int nodes, int ranks_per_process);

// Fills theoretical_busbw_gbps, achievable_busbw_gbps, efficiency and model_algo of a row.
void apply_bandwidth_model(const CollectiveBandwidths& model, ResultRow& row);

// Lines for the run's notes: the basis of each collective's figure.
std::vector<std::string> bandwidth_notes(const CollectiveBandwidths& model);

}  // namespace commbench
