#include "commbench/analysis/replay_nic_load.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "commbench/analysis/replay_fabric.hpp"
#include "commbench/core/collective_descriptor.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/topology/bandwidth_model.hpp"

namespace commbench {

namespace {

std::string gbps(double value) { return significant_text(value, 3) + " GB/s"; }

// The time the job's bytes went through in: its profiler steps (the longest rank's window
// of each), else each rank's own communication time, averaged (then the figure is the
// rate while communicating, an upper bound of the step's).
void traced_time(const TraceSummary& summary, JobNicLoad& load) {
  for (const StepSummary& step : summary.steps) load.seconds += step.step_seconds;
  load.over_steps = load.seconds > 0;
  if (load.over_steps) return;
  for (const RankTraceSummary& rank : summary.ranks) load.seconds += rank.communication_seconds.value_or(0);
  if (!summary.ranks.empty()) load.seconds /= static_cast<double>(summary.ranks.size());
}

}  // namespace

JobNicLoad job_nic_load(const TraceSummary& summary, int nodes, const std::optional<NodeTopology>& node) {
  JobNicLoad load;
  const int world = std::max(1, summary.world_size);
  const int ranks_per_node = (world + std::max(1, nodes) - 1) / std::max(1, nodes);
  double timed_bytes_per_node = 0;  // of the calls the backend timed, for a rate over their time
  for (const TracedClass& c : summary.classes) {
    const int group = c.group_ranks > 0 ? c.group_ranks : world;
    const std::optional<Collective> collective = collective_named(c.op);
    if (nodes <= 1 || group <= ranks_per_node || !collective) continue;
    load.crosses_nodes = true;
    const double per_call = static_cast<double>(c.bytes) * descriptor_of(*collective).bus_bandwidth_factor(group);
    load.bytes_per_node += per_call * static_cast<double>(c.calls);
    timed_bytes_per_node += per_call * static_cast<double>(c.timed_calls);
  }
  if (nodes <= 1) {
    load.text = "the job ran on one node (its traces name one host): nothing crossed a NIC";
    return load;
  }
  if (!load.crosses_nodes) {
    load.text = fmt::format("no call's group spans the job's {}: nothing crossed a NIC", count_text(nodes, "node"));
    return load;
  }
  traced_time(summary, load);
  // Without steps the time is the timed calls' own: the bytes are theirs too.
  if (!load.over_steps) load.bytes_per_node = timed_bytes_per_node;
  if (load.seconds <= 0) {
    load.text = "no rate: the traces hold no profiler step and no call the backend timed";
    return load;
  }
  const double per_node = load.bytes_per_node / load.seconds / 1e9;
  const std::string over = load.over_steps ? "over the traced steps" : "while communicating (no profiler steps)";
  if (node) {
    // The node's first GPUs, one per rank, as a launcher binds local ranks to devices;
    // none (host ranks) on a node without GPUs.
    JobLayout layout{nodes, ranks_per_node, {}};
    for (std::size_t g = 0; g < node->gpus.size() && static_cast<int>(g) < ranks_per_node; ++g)
      layout.gpu_bus_ids.push_back(node->gpus[g].bus_id);
    const NodeNetworkPorts ports = inter_node_ports(*node, layout);
    load.nics = ports.ports;
    load.nic_gbps = ports.port_gbps;
  }
  if (load.nics <= 0) {
    load.text = fmt::format("{} out of each node {}; its NICs unknown ({})", gbps(per_node), over,
                            node ? "the topology given counts no active NIC port" : "give --topology FILE");
    return load;
  }
  load.gbps_per_nic = per_node / load.nics;
  load.text = fmt::format("{} per NIC{} {} ({} NIC{} per node)", gbps(*load.gbps_per_nic),
                          load.nic_gbps ? " of " + gbps(*load.nic_gbps) : std::string(" (rate unknown)"), over,
                          load.nics, load.nics == 1 ? "" : "s");
  return load;
}

}  // namespace commbench
