#include "commbench/cli/collectives_bandwidth.hpp"

#include "commbench/cli/live_probe.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/name_lookup.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/topology/node_probe.hpp"
#include "commbench/topology/topology_json.hpp"

namespace commbench {

CollectiveBandwidths model_collective_bandwidths(Backend& backend, const std::vector<Collective>& ops) {
  Bootstrap& group = backend.group();
  // Rank 0 probes its node and sends it as the JSON bench-topology gathers nodes with; a
  // failed probe sends its reason instead, which becomes the basis of every figure.
  std::string node_json, probe_failure;
  if (group.rank() == 0) {
    try {
      node_json = topology_to_json_text(probe_node(probe_options_for_this_build("", "", "")));
    } catch (const Error& e) {
      probe_failure = e.what();
    }
  }
  node_json = group.broadcast(node_json, 0);
  probe_failure = group.broadcast(probe_failure, 0);

  // Every rank models the layout of rank 0's node from what all ranks know: the GPUs of
  // the processes on that host, and how many processes and ranks run there.
  std::string own_ids;
  for (const std::string& id : backend.device_bus_ids()) own_ids += (own_ids.empty() ? "" : ",") + id;
  const std::vector<std::string> all_ids = group.all_gather(own_ids);
  const std::string& first_host = group.hostnames().front();
  JobLayout layout;
  layout.nodes = group.node_count();
  int processes_per_node = 0;
  for (int r = 0; r < group.size(); ++r) {
    if (group.hostnames()[static_cast<std::size_t>(r)] != first_host) continue;
    ++processes_per_node;
    for (const std::string& id : detail::split_list(all_ids[static_cast<std::size_t>(r)]))
      if (!id.empty()) layout.gpu_bus_ids.push_back(id);
  }
  const int ranks_per_process = group.size() > 0 ? backend.ranks() / group.size() : 1;
  layout.ranks_per_node = processes_per_node * ranks_per_process;

  // Every rank models from the same text, so all agree on success or on the same failure.
  CollectiveBandwidths model;
  if (probe_failure.empty()) {
    try {
      const NodeTopology node = topology_from_json_text(node_json, "the topology model of rank 0");
      for (const Collective op : ops) model[op] = theoretical_busbw(op, node, layout);
      return model;
    } catch (const Error& e) {
      probe_failure = e.what();
    }
  }
  for (const Collective op : ops)
    model[op] = {std::nullopt, std::nullopt, "topology probe failed: " + probe_failure, ""};
  return model;
}

void apply_bandwidth_model(const CollectiveBandwidths& model, ResultRow& row) {
  const auto found = model.find(row.op_case.op);
  if (found == model.end()) return;
  row.theoretical_busbw_gbps = found->second.spec_gbps;
  row.achievable_busbw_gbps = found->second.achievable_gbps;
  if (found->second.spec_gbps && *found->second.spec_gbps > 0)
    row.efficiency = row.busbw_gbps / *found->second.spec_gbps;
}

std::vector<std::string> bandwidth_notes(const CollectiveBandwidths& model) {
  std::vector<std::string> notes;
  for (const auto& [op, bw] : model) {
    std::string line = "theoretical busbw of " + std::string(name_of(op)) + ": ";
    if (bw.spec_gbps) {
      line += "spec " + significant_text(*bw.spec_gbps, 4) + " GB/s, achievable " +
              significant_text(bw.achievable_gbps.value_or(*bw.spec_gbps), 4) + " GB/s; ";
    } else {
      line += "unknown; ";
    }
    notes.push_back(line + bw.basis);
  }
  return notes;
}

}  // namespace commbench
