#include "commbench/analysis/pair_cell_model.hpp"

#include "commbench/analysis/collectives_bandwidth.hpp"
#include "commbench/topology/bandwidth_model.hpp"

namespace commbench {

void apply_link_model(const std::optional<NodeTopology>& node, const std::string& probe_failure,
                      const std::vector<std::string>& bus_ids, const std::vector<std::string>& hostnames,
                      PairCell& cell) {
  if (!node) {
    cell.link = "topology probe failed: " + probe_failure;
    return;
  }
  const auto bus = [&](int rank) { return bus_ids[static_cast<std::size_t>(rank)]; };
  PathBudget budget;
  if (cell.src_host == cell.dst_host) {
    JobLayout layout{1, 2, {}};
    if (!bus(cell.src_rank).empty() && !bus(cell.dst_rank).empty())
      layout.gpu_bus_ids = {bus(cell.src_rank), bus(cell.dst_rank)};
    budget = pair_budget(*node, layout);
  } else if (bus(cell.src_rank).empty()) {
    budget = single_nic_budget(*node, JobLayout{2, 1, {}});
  } else {
    // The sender's NICs depend on which GPUs of its own host the job uses.
    std::vector<std::vector<std::string>> bus_ids_of_process;
    for (const std::string& id : bus_ids) bus_ids_of_process.push_back({id});
    budget = gpu_network_budget(*node, layout_on_host(hostnames, bus_ids_of_process, cell.src_host, 2, 1),
                                bus(cell.src_rank));
  }
  cell.link = budget.description;
  cell.theoretical_gbps = budget.spec_gbps;
  if (budget.spec_gbps && *budget.spec_gbps > 0) cell.efficiency = cell.gbps / *budget.spec_gbps;
}

}  // namespace commbench
