#include "commbench/p2p/rail_schedule.hpp"

#include <algorithm>
#include <map>

namespace commbench {

NodeRanks group_ranks_by_node(const std::vector<std::string>& rank_hosts) {
  NodeRanks nodes;
  nodes.rail_of_rank.resize(rank_hosts.size());
  std::map<std::string, std::size_t> node_of_host;
  for (std::size_t rank = 0; rank < rank_hosts.size(); ++rank) {
    const auto [found, added] = node_of_host.emplace(rank_hosts[rank], nodes.hosts.size());
    if (added) {
      nodes.hosts.push_back(rank_hosts[rank]);
      nodes.ranks.emplace_back();
    }
    std::vector<int>& on_node = nodes.ranks[found->second];
    nodes.rail_of_rank[rank] = static_cast<int>(on_node.size());
    on_node.push_back(static_cast<int>(rank));
  }
  return nodes;
}

std::vector<PairRound> rail_rounds(const std::vector<PairRound>& node_rounds, const NodeRanks& nodes) {
  std::vector<PairRound> rounds;
  for (const PairRound& node_round : node_rounds) {
    PairRound round;
    for (const auto& [first, second] : node_round) {
      const std::vector<int>& a = nodes.ranks.at(static_cast<std::size_t>(first));
      const std::vector<int>& b = nodes.ranks.at(static_cast<std::size_t>(second));
      for (std::size_t rail = 0; rail < std::min(a.size(), b.size()); ++rail)
        round.push_back(std::minmax(a[rail], b[rail]));
    }
    std::sort(round.begin(), round.end());
    if (!round.empty()) rounds.push_back(std::move(round));
  }
  return rounds;
}

}  // namespace commbench
