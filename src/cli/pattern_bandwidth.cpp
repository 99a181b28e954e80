#include "commbench/cli/pattern_bandwidth.hpp"

#include <cmath>
#include <optional>

#include "commbench/cli/collectives_bandwidth.hpp"
#include "commbench/topology/bandwidth_model.hpp"

namespace commbench {

PatternBandwidthModel model_pattern_bandwidth(PatternGroups& groups) {
  PatternBandwidthModel model;
  const std::optional<NodeTopology> node = probe_reporting_node(groups.world().group(), model.probe_failure);
  for (int index = 0; index < kGroupRoleCount; ++index) {
    const auto role = static_cast<GroupRole>(index);
    if (!groups.has(role)) continue;
    Backend& backend = groups.backend(role);
    const JobLayout layout = layout_of_group(backend);
    // Every collective, alltoallv included (MoE dispatch), which --op all leaves out.
    for (std::size_t op_index = 0; op_index < kCollectiveCount; ++op_index) {
      const auto op = static_cast<Collective>(op_index);
      GroupBandwidth bandwidth;
      bandwidth.ranks = backend.ranks();
      bandwidth.nodes = layout.nodes;
      if (node) {
        const TheoreticalBusbw figure = theoretical_busbw(op, *node, layout);
        bandwidth.spec_gbps = figure.spec_gbps;
        bandwidth.achievable_gbps = figure.achievable_gbps;
        bandwidth.basis = figure.basis;
      } else {
        bandwidth.basis = "topology probe failed: " + model.probe_failure;
      }
      model.bandwidths[CommunicationType{StepKind::collective, op, role}] = bandwidth;
      // Peer rounds are point-to-point: the sendrecv figure (a pair's path).
      if (op == Collective::sendrecv) model.bandwidths[CommunicationType{StepKind::peer, op, role}] = bandwidth;
    }
  }
  if (!node) {
    model.nic.basis = "topology probe failed: " + model.probe_failure;
    return model;
  }
  const JobLayout world_layout = layout_of_group(groups.world());
  const PathBudget all_ports = inter_node_budget(*node, world_layout);
  const PathBudget one_port = single_nic_budget(*node, world_layout);
  model.nic.nic_gbps = one_port.spec_gbps;
  model.nic.basis = all_ports.description;
  if (all_ports.spec_gbps && one_port.spec_gbps && *one_port.spec_gbps > 0)
    model.nic.nics = static_cast<int>(std::lround(*all_ports.spec_gbps / *one_port.spec_gbps));
  return model;
}

}  // namespace commbench
