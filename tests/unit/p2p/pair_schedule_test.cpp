#include <gtest/gtest.h>

#include <map>
#include <set>

#include "commbench/p2p/pair_schedule.hpp"
#include "usage_error.hpp"

namespace commbench {
namespace {

using testing::usage_error_of;

// No rank twice in a round, every pair inside [0, ranks) and ordered.
void expect_disjoint(const std::vector<PairRound>& rounds, int ranks) {
  for (std::size_t r = 0; r < rounds.size(); ++r) {
    std::set<int> seen;
    for (const auto& [first, second] : rounds[r]) {
      EXPECT_LT(first, second) << "round " << r;
      EXPECT_GE(first, 0);
      EXPECT_LT(second, ranks);
      EXPECT_TRUE(seen.insert(first).second) << "rank " << first << " twice in round " << r;
      EXPECT_TRUE(seen.insert(second).second) << "rank " << second << " twice in round " << r;
    }
  }
}

std::map<RankPair, int> pair_counts(const std::vector<PairRound>& rounds) {
  std::map<RankPair, int> counts;
  for (const PairRound& round : rounds)
    for (const RankPair& pair : round) counts[pair] += 1;
  return counts;
}

TEST(PairSchedule, AllPairsMeetsEveryPairOnceInDisjointRounds) {
  for (int ranks : {2, 3, 4, 5, 7, 8, 16, 33, 1024}) {
    SCOPED_TRACE(ranks);
    const std::vector<PairRound> rounds = pair_rounds(PairSchedule::all_pairs, ranks);
    expect_disjoint(rounds, ranks);
    const bool even = ranks % 2 == 0;
    EXPECT_EQ(rounds.size(), static_cast<std::size_t>(even ? ranks - 1 : ranks));
    for (const PairRound& round : rounds) EXPECT_EQ(round.size(), static_cast<std::size_t>(ranks / 2));
    const std::map<RankPair, int> counts = pair_counts(rounds);
    EXPECT_EQ(counts.size(), static_cast<std::size_t>(ranks) * (ranks - 1) / 2);  // every pair...
    for (const auto& [pair, count] : counts) EXPECT_EQ(count, 1);                  // ...exactly once
  }
}

TEST(PairSchedule, OneOrNoRankHasNoRoundsAndTwoRanksOne) {
  for (PairSchedule schedule : {PairSchedule::all_pairs, PairSchedule::ring, PairSchedule::random}) {
    EXPECT_TRUE(pair_rounds(schedule, 0, 3).empty());
    EXPECT_TRUE(pair_rounds(schedule, 1, 3).empty());
  }
  EXPECT_EQ(pair_rounds(PairSchedule::all_pairs, 2), (std::vector<PairRound>{{{0, 1}}}));
  EXPECT_EQ(pair_rounds(PairSchedule::ring, 2), (std::vector<PairRound>{{{0, 1}}}));
}

TEST(PairSchedule, RingMeetsEachNeighbourOnce) {
  EXPECT_EQ(pair_rounds(PairSchedule::ring, 4), (std::vector<PairRound>{{{0, 1}, {2, 3}}, {{0, 3}, {1, 2}}}));
  EXPECT_EQ(pair_rounds(PairSchedule::ring, 5),
            (std::vector<PairRound>{{{0, 1}, {2, 3}}, {{1, 2}, {3, 4}}, {{0, 4}}}));
  for (int ranks : {3, 6, 9, 1024}) {
    SCOPED_TRACE(ranks);
    const std::vector<PairRound> rounds = pair_rounds(PairSchedule::ring, ranks);
    expect_disjoint(rounds, ranks);
    EXPECT_EQ(rounds.size(), ranks % 2 == 0 ? 2u : 3u);
    std::map<RankPair, int> expected;
    for (int i = 0; i < ranks; ++i)
      expected[{std::min(i, (i + 1) % ranks), std::max(i, (i + 1) % ranks)}] = 1;
    EXPECT_EQ(pair_counts(rounds), expected);
  }
}

TEST(PairSchedule, RandomRoundsAreMatchingsFixedByTheSeed) {
  for (int ranks : {4, 7, 1024}) {
    SCOPED_TRACE(ranks);
    const std::vector<PairRound> rounds = pair_rounds(PairSchedule::random, ranks, 5, 42);
    ASSERT_EQ(rounds.size(), 5u);
    expect_disjoint(rounds, ranks);
    for (const PairRound& round : rounds) EXPECT_EQ(round.size(), static_cast<std::size_t>(ranks / 2));
    EXPECT_EQ(pair_rounds(PairSchedule::random, ranks, 5, 42), rounds);
  }
  EXPECT_NE(pair_rounds(PairSchedule::random, 1024, 1, 1), pair_rounds(PairSchedule::random, 1024, 1, 2));
}

TEST(PairSchedule, OneWayMeasuresEachOrderedPairOnceAndBothWaysTogether) {
  const std::vector<PairRound> rounds = pair_rounds(PairSchedule::all_pairs, 4);
  std::map<std::pair<int, int>, int> one_way;
  std::map<std::pair<int, int>, int> both;
  for (const PairRound& round : rounds) {
    const std::vector<DirectedRound> directed = directed_rounds(round, false, 4);
    ASSERT_EQ(directed.size(), 2u);
    EXPECT_EQ(directed[0].direction, PairDirection::forward);
    EXPECT_EQ(directed[1].direction, PairDirection::backward);
    for (const DirectedRound& part : directed)
      for (const Transfer& transfer : part.transfers.transfers()) one_way[{transfer.source, transfer.destination}] += 1;
    const std::vector<DirectedRound> together = directed_rounds(round, true, 4);
    ASSERT_EQ(together.size(), 1u);
    EXPECT_EQ(together[0].direction, PairDirection::both);
    for (const Transfer& transfer : together[0].transfers.transfers())
      both[{transfer.source, transfer.destination}] += 1;
  }
  EXPECT_EQ(one_way.size(), 12u);  // 4 x 3 ordered pairs
  for (const auto& [pair, count] : one_way) EXPECT_EQ(count, 1);
  EXPECT_EQ(both, one_way);
}

TEST(PairSchedule, BadInputIsOneLine) {
  EXPECT_EQ(usage_error_of([] { parse_pair_schedule("mesh", "--schedule"); }),
            "--schedule: 'mesh' is not a schedule (all-pairs, ring or random)");
  EXPECT_EQ(usage_error_of([] { pair_rounds(PairSchedule::random, 4, 0); }),
            "--rounds: the random schedule needs at least 1 round (got 0)");
  EXPECT_EQ(parse_pair_schedule("all-pairs", "--schedule"), PairSchedule::all_pairs);
}

}  // namespace
}  // namespace commbench
