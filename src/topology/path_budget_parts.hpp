// What the bandwidth model's path budgets share across its files: the layout's GPUs as
// found on the node, and a budget that only says why nothing is known. The budgets inside
// a node (bandwidth_model.cpp) and between nodes (network_budget.cpp) both start from
// these. Internal to the topology library.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "commbench/topology/bandwidth_model.hpp"

namespace commbench {

inline PathBudget unknown_budget(std::string why) { return {std::nullopt, std::nullopt, std::move(why)}; }

// Indexes into node.gpus of the layout's GPUs, in bus order, each once; `missing` names the
// first bus id the node does not have, and then the indexes are incomplete.
struct UsedGpus {
  std::vector<int> indexes;
  std::string missing;
};
UsedGpus used_gpus(const NodeTopology& node, const JobLayout& layout);

}  // namespace commbench
