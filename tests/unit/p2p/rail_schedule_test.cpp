#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "commbench/p2p/rail_schedule.hpp"

namespace commbench {
namespace {

// `nodes` hosts of `per_node` ranks each: block placement (srun's default) puts a node's
// ranks next to each other, cyclic placement (--distribution=cyclic) deals them round.
std::vector<std::string> hosts(int nodes, int per_node, bool cyclic) {
  std::vector<std::string> rank_hosts;
  for (int rank = 0; rank < nodes * per_node; ++rank)
    rank_hosts.push_back("node" + std::to_string(cyclic ? rank % nodes : rank / per_node));
  return rank_hosts;
}

TEST(RailSchedule, RanksGroupByHostInOrderOfTheirFirstRankWhateverThePlacement) {
  const NodeRanks block = group_ranks_by_node(hosts(2, 3, false));
  EXPECT_EQ(block.hosts, (std::vector<std::string>{"node0", "node1"}));
  EXPECT_EQ(block.ranks, (std::vector<std::vector<int>>{{0, 1, 2}, {3, 4, 5}}));
  EXPECT_EQ(block.rail_of_rank, (std::vector<int>{0, 1, 2, 0, 1, 2}));
  const NodeRanks cyclic = group_ranks_by_node(hosts(2, 3, true));
  EXPECT_EQ(cyclic.ranks, (std::vector<std::vector<int>>{{0, 2, 4}, {1, 3, 5}}));
  EXPECT_EQ(cyclic.rail_of_rank, (std::vector<int>{0, 0, 1, 1, 2, 2}));
}

// Every round disjoint; every pair joins two nodes on one rail; every such pair once.
void expect_every_rail_pair_once(int node_count, int per_node, bool cyclic) {
  const NodeRanks nodes = group_ranks_by_node(hosts(node_count, per_node, cyclic));
  const std::vector<PairRound> rounds = rail_rounds(pair_rounds(PairSchedule::all_pairs, node_count), nodes);
  const std::string layout = std::to_string(node_count) + " nodes x " + std::to_string(per_node);
  EXPECT_EQ(rounds.size(), static_cast<std::size_t>(node_count % 2 == 0 ? node_count - 1 : node_count)) << layout;
  const auto node_of = [&](int rank) { return cyclic ? rank % node_count : rank / per_node; };
  std::map<RankPair, int> met;
  for (const PairRound& round : rounds) {
    std::set<int> busy;
    for (const auto& [first, second] : round) {
      EXPECT_TRUE(busy.insert(first).second && busy.insert(second).second) << layout << ": a rank twice in a round";
      EXPECT_NE(node_of(first), node_of(second)) << layout;
      EXPECT_EQ(nodes.rail_of_rank[static_cast<std::size_t>(first)],
                nodes.rail_of_rank[static_cast<std::size_t>(second)]) << layout;
      ++met[{first, second}];
    }
  }
  const std::size_t expected = static_cast<std::size_t>(per_node) * node_count * (node_count - 1) / 2;
  EXPECT_EQ(met.size(), expected) << layout;
  for (const auto& [pair, count] : met) EXPECT_EQ(count, 1) << layout << ": " << pair.first << "-" << pair.second;
}

TEST(RailSchedule, AllPairsOfNodesMeetsEverySameRailPairOnceInDisjointRounds) {
  expect_every_rail_pair_once(4, 8, false);
  expect_every_rail_pair_once(4, 8, true);
  expect_every_rail_pair_once(5, 2, false);  // odd: one node idle per round
  expect_every_rail_pair_once(64, 8, false);
  expect_every_rail_pair_once(2, 1, false);  // one rank per node: the node matrix
}

TEST(RailSchedule, NodesOfDifferentSizesMeetOnTheRailsBothHave) {
  const NodeRanks nodes = group_ranks_by_node({"a", "a", "a", "b", "c", "c"});
  const std::vector<PairRound> rounds = rail_rounds(pair_rounds(PairSchedule::all_pairs, 3), nodes);
  std::set<RankPair> met;
  for (const PairRound& round : rounds) met.insert(round.begin(), round.end());
  // a = {0, 1, 2}, b = {3}, c = {4, 5}: a-b on rail 0, a-c on rails 0 and 1, b-c on rail 0.
  EXPECT_EQ(met, (std::set<RankPair>{{0, 3}, {0, 4}, {1, 5}, {3, 4}}));
}

TEST(RailSchedule, OneNodeHasNoRailPairs) {
  const NodeRanks nodes = group_ranks_by_node(hosts(1, 8, false));
  EXPECT_TRUE(rail_rounds(pair_rounds(PairSchedule::all_pairs, 1), nodes).empty());
}

}  // namespace
}  // namespace commbench
