#include "commbench/analysis/pattern_bandwidth.hpp"

#include <optional>

#include "commbench/analysis/collectives_bandwidth.hpp"
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
  // The ports counted, not a GPU's share of them (single_nic_budget): a share can add up
  // several NICs and stop at the GPU's own PCIe link.
  const NodeNetworkPorts ports = inter_node_ports(*node, world_layout);
  model.nic.nics = ports.ports;
  model.nic.nic_gbps = ports.port_gbps;
  model.nic.basis = inter_node_budget(*node, world_layout).description;
  return model;
}

}  // namespace commbench
