#include "commbench/analysis/collectives_bandwidth.hpp"

#include "commbench/analysis/live_probe.hpp"
#include "commbench/backend/typed_exchange.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/topology/node_probe.hpp"
#include "commbench/topology/topology_fields.hpp"
#include "commbench/topology/topology_json.hpp"

namespace commbench {

std::optional<NodeTopology> probe_reporting_node(Bootstrap& group, std::string& failure) {
  // Rank 0 probes its node and sends its model; a failed probe sends its reason instead,
  // which becomes the basis of every figure.
  std::optional<NodeTopology> node;
  failure.clear();
  if (group.rank() == 0) {
    try {
      node = probe_node(probe_options_for_this_build("", "", ""));
    } catch (const Error& e) {
      failure = e.what();
    }
  }
  node = broadcast_as(group, node, 0);
  failure = broadcast_as(group, failure, 0);
  if (!failure.empty()) return std::nullopt;
  // Every rank reads the same model as its file would hold it (bench-topology's), so all
  // agree on success or on the same failure.
  try {
    return topology_as_written(node.value(), "the topology model of rank 0");
  } catch (const Error& e) {
    failure = e.what();
    return std::nullopt;
  }
}

JobLayout layout_on_host(const std::vector<std::string>& hostnames,
                         const std::vector<std::vector<std::string>>& bus_ids_of_process, const std::string& host,
                         int nodes, int ranks_per_process) {
  JobLayout layout;
  layout.nodes = nodes;
  int processes_on_host = 0;
  for (std::size_t process = 0; process < hostnames.size() && process < bus_ids_of_process.size(); ++process) {
    if (hostnames[process] != host) continue;
    ++processes_on_host;
    for (const std::string& id : bus_ids_of_process[process])
      if (!id.empty()) layout.gpu_bus_ids.push_back(id);
  }
  layout.ranks_per_node = processes_on_host * ranks_per_process;
  return layout;
}

JobLayout layout_of_group(Backend& backend) {
  Bootstrap& group = backend.group();
  // Every rank models the layout of the first rank's node from what all ranks know: the
  // GPUs of the processes on that host, and how many processes and ranks run there.
  const std::vector<std::vector<std::string>> all_ids = all_gather_as(group, backend.device_bus_ids());
  const int ranks_per_process = group.size() > 0 ? backend.ranks() / group.size() : 1;
  return layout_on_host(group.hostnames(), all_ids, group.hostnames().front(), group.node_count(), ranks_per_process);
}

CollectiveBandwidths model_collective_bandwidths(Backend& backend, const std::vector<Collective>& ops,
                                                 std::optional<NodeTopology>* probed) {
  std::string probe_failure;
  const std::optional<NodeTopology> node = probe_reporting_node(backend.group(), probe_failure);
  if (probed != nullptr) *probed = node;
  const JobLayout layout = layout_of_group(backend);
  CollectiveBandwidths model;
  for (const Collective op : ops)
    model[op] = node ? theoretical_busbw(op, *node, layout)
                     : TheoreticalBusbw{std::nullopt, std::nullopt, "topology probe failed: " + probe_failure, ""};
  return model;
}

void apply_bandwidth_model(const CollectiveBandwidths& model, ResultRow& row) {
  const auto found = model.find(row.op_case.op);
  if (found == model.end()) return;
  row.theoretical_busbw_gbps = found->second.spec_gbps;
  row.achievable_busbw_gbps = found->second.achievable_gbps;
  if (found->second.spec_gbps) row.model_algo = found->second.algorithm;
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
