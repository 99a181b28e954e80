// bench-replay's NIC figure: how many bytes per second the job's calls put through each NIC
// of a node, against the NIC's rate ("6 GB/s per NIC of 50 GB/s"), the figure a dashboard
// of the running job shows. A call whose group holds more ranks than a node sends, out of
// each node, its bytes times its collective's bus factor (one ring edge per node, the
// rings together carrying the factor), as bench-patterns counts a step's NIC load.
#pragma once

#include <optional>
#include <string>

#include "commbench/replay/trace_summary.hpp"
#include "commbench/topology/node_topology.hpp"

namespace commbench {

struct JobNicLoad {
  bool crosses_nodes = false;
  double bytes_per_node = 0;           // per rank's traced time (below)
  double seconds = 0;                  // the steps' windows, else the ranks' communication time
  bool over_steps = false;             // whether `seconds` are the profiler steps
  int nics = 0;                        // per node, from the node's topology; 0 unknown
  std::optional<double> nic_gbps;      // one port's rate
  std::optional<double> gbps_per_nic;  // the job's bytes per NIC per second
  std::string text;
};

// `nodes`: the hosts of the job's traces; `node`: a node's topology (bench-topology --json),
// when given, for its NICs between nodes.
JobNicLoad job_nic_load(const TraceSummary& summary, int nodes, const std::optional<NodeTopology>& node);

}  // namespace commbench
