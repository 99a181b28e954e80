#include "commbench/backend/peer_round.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "commbench/core/error.hpp"

namespace commbench {
namespace {

TEST(PeerRound, BothWaysListsEachDirectionAndWhoIdles) {
  const std::pair<int, int> pairs[] = {{0, 1}, {2, 3}};
  const PeerRound round = PeerRound::both_ways(pairs, 5);
  EXPECT_EQ(round.transfers().size(), 4u);
  EXPECT_EQ(round.incoming(0), std::vector<int>{1});
  EXPECT_EQ(round.outgoing(3), std::vector<int>{2});
  EXPECT_TRUE(round.involves(2));
  EXPECT_FALSE(round.involves(4));
  EXPECT_TRUE(round.incoming(4).empty());
}

TEST(PeerRound, ReceiveSlotsFollowTheRoundsOrder) {
  const PeerRound round({{3, 0}, {1, 0}, {2, 0}}, 4);
  EXPECT_EQ(round.incoming(0), (std::vector<int>{3, 1, 2}));
  EXPECT_TRUE(round.outgoing(0).empty());
}

TEST(PeerRound, RefusesWhatNoBackendCouldPost) {
  EXPECT_THROW(PeerRound({{0, 4}}, 4), UsageError);
  EXPECT_THROW(PeerRound({{-1, 0}}, 4), UsageError);
  EXPECT_THROW(PeerRound({{0, 1}, {0, 1}}, 4), UsageError);
  EXPECT_NO_THROW(PeerRound({}, 1));
}

TEST(PeerRound, ALoopbackBothSendsAndReceives) {
  const PeerRound round({{2, 2}}, 4);
  EXPECT_EQ(round.incoming(2), std::vector<int>{2});
  EXPECT_EQ(round.outgoing(2), std::vector<int>{2});
  EXPECT_FALSE(round.involves(1));
}

TEST(PeerRound, PatternTellsSourcesAndPositionsApart) {
  std::vector<std::uint8_t> message(300);
  fill_peer_pattern(message, 2);
  EXPECT_EQ(count_peer_pattern_mismatches(message, 2), 0u);
  // From another source, every byte differs; shifted by one, every byte differs too.
  EXPECT_EQ(count_peer_pattern_mismatches(message, 3), message.size());
  EXPECT_EQ(count_peer_pattern_mismatches(std::span(message).subspan(1), 2), message.size() - 1);
  message[17] ^= 1;
  EXPECT_EQ(count_peer_pattern_mismatches(message, 2), 1u);
}

}  // namespace
}  // namespace commbench
