#include "commbench/cli/collectives_bandwidth.hpp"

#include <cstdio>
#include <sstream>

#include "commbench/cli/live_probe.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/topology/node_probe.hpp"

namespace commbench {
namespace {

// One line per collective: "op<TAB>spec<TAB>achievable<TAB>basis", numbers empty when unknown.
std::string encode(const CollectiveBandwidths& model) {
  std::ostringstream out;
  for (const auto& [op, bw] : model) {
    char spec[40] = "", achievable[40] = "";
    if (bw.spec_gbps) std::snprintf(spec, sizeof spec, "%.17g", *bw.spec_gbps);
    if (bw.achievable_gbps) std::snprintf(achievable, sizeof achievable, "%.17g", *bw.achievable_gbps);
    out << name_of(op) << '\t' << spec << '\t' << achievable << '\t' << bw.basis << '\n';
  }
  return out.str();
}

CollectiveBandwidths decode(const std::string& text) {
  CollectiveBandwidths model;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string op, spec, achievable, basis;
    std::getline(fields, op, '\t');
    std::getline(fields, spec, '\t');
    std::getline(fields, achievable, '\t');
    std::getline(fields, basis);
    TheoreticalBusbw bw;
    if (!spec.empty()) bw.spec_gbps = std::stod(spec);
    if (!achievable.empty()) bw.achievable_gbps = std::stod(achievable);
    bw.basis = basis;
    model[parse_collective(op, "model")] = bw;
  }
  return model;
}

}  // namespace

CollectiveBandwidths model_collective_bandwidths(Backend& backend, const std::vector<Collective>& ops) {
  Bootstrap& group = backend.group();
  // The GPUs of rank 0's node, gathered from every rank there.
  std::string own_ids;
  for (const std::string& id : backend.device_bus_ids()) own_ids += (own_ids.empty() ? "" : ",") + id;
  const std::vector<std::string> all_ids = group.all_gather(own_ids);
  std::string encoded;
  if (group.rank() == 0) {
    JobLayout layout;
    layout.nodes = group.node_count();
    const int processes_per_node = group.local_size();
    const int ranks_per_process = group.size() > 0 ? backend.ranks() / group.size() : 1;
    layout.ranks_per_node = processes_per_node * ranks_per_process;
    for (int r = 0; r < group.size(); ++r) {
      if (group.hostnames()[static_cast<std::size_t>(r)] != group.hostname()) continue;
      std::istringstream ids(all_ids[static_cast<std::size_t>(r)]);
      std::string id;
      while (std::getline(ids, id, ',')) {
        if (!id.empty()) layout.gpu_bus_ids.push_back(id);
      }
    }
    CollectiveBandwidths model;
    try {
      const NodeTopology node = probe_node(probe_options_for_this_build("", "", ""));
      for (const Collective op : ops) model[op] = theoretical_busbw(op, node, layout);
    } catch (const Error& e) {
      for (const Collective op : ops) model[op] = {std::nullopt, std::nullopt, std::string("topology probe failed: ") + e.what()};
    }
    encoded = encode(model);
  }
  return decode(group.broadcast(encoded, 0));
}

void apply_bandwidth_model(const CollectiveBandwidths& model, ResultRow& row) {
  const auto found = model.find(row.op_case.op);
  if (found == model.end()) return;
  row.theoretical_busbw_gbps = found->second.spec_gbps;
  row.achievable_busbw_gbps = found->second.achievable_gbps;
  if (found->second.spec_gbps && *found->second.spec_gbps > 0) row.efficiency = row.busbw_gbps / *found->second.spec_gbps;
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
