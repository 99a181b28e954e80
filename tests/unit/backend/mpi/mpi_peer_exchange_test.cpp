// Peer-addressed send/recv on the MPI backend (under mpirun with 1, 2 and 4 ranks; every
// test is collective). Each rank checks the bytes it received against the pattern of the
// rank it received them from.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "commbench/backend/peer_exchange.hpp"
#include "commbench/core/error.hpp"
#include "mpi_test_support.hpp"

namespace commbench {
namespace {

constexpr std::uint64_t kOddMessageBytes = 1000;  // not a multiple of any element size

// Runs one round and checks it on every rank: the received bytes are right, the rank's
// role (idle or not) shows in its timing, and a damaged byte is caught.
void expect_round_delivers(Backend& backend, const PeerRound& round, std::uint64_t message_bytes) {
  const int rank = backend.group().rank();
  auto exchange = backend.peer_exchange(round, message_bytes);
  exchange->run_single();
  EXPECT_EQ(exchange->count_wrong(), 0u) << "rank " << rank;
  const double seconds = exchange->time_rounds(5);
  if (round.involves(rank))
    EXPECT_GT(seconds, 0.0) << "rank " << rank;
  else
    EXPECT_EQ(seconds, 0.0) << "idle rank " << rank << " posted something";
  exchange->run_single();  // timed rounds leave right bytes too, but prove it afresh
  exchange->corrupt_received();
  const auto expected_wrong = round.incoming(rank).empty() ? 0u : 1u;
  EXPECT_EQ(exchange->count_wrong(), expected_wrong) << "rank " << rank;
  backend.group().barrier();
}

TEST(MpiPeerExchange, AnyPairBothDirections) {
  auto backend = world_backend();
  const int n = backend->ranks();
  if (n < 2) GTEST_SKIP() << "a pair needs two ranks";
  // The first and the last rank: not neighbours once there are more than two.
  const std::pair<int, int> ends[] = {{0, n - 1}};
  expect_round_delivers(*backend, PeerRound::both_ways(ends, n), kOddMessageBytes);
}

TEST(MpiPeerExchange, OneDirectionOnlyLeavesTheSenderWithNothingToCheck) {
  auto backend = world_backend();
  const int n = backend->ranks();
  if (n < 2) GTEST_SKIP() << "a pair needs two ranks";
  const PeerRound round({{n - 1, 0}}, n);
  EXPECT_EQ(round.incoming(0), std::vector<int>{n - 1});
  EXPECT_TRUE(round.incoming(n - 1).empty());
  expect_round_delivers(*backend, round, kOddMessageBytes);
}

TEST(MpiPeerExchange, DisjointPairsBothWaysAtOnce) {
  auto backend = world_backend();
  const int n = backend->ranks();
  std::vector<std::pair<int, int>> pairs;
  for (int first = 0; first + 1 < n; first += 2) pairs.emplace_back(first, first + 1);
  if (pairs.empty()) GTEST_SKIP() << "a pair needs two ranks";
  expect_round_delivers(*backend, PeerRound::both_ways(pairs, n), 64 * 1024 + 3);
}

TEST(MpiPeerExchange, EveryRankSendsToRankZeroInOneRound) {
  auto backend = world_backend();
  const int n = backend->ranks();
  if (n < 2) GTEST_SKIP() << "a pair needs two ranks";
  // Rank 0 receives n-1 messages at once, each into its own slot: a slot mix-up shows.
  std::vector<Transfer> transfers;
  for (int source = n - 1; source >= 1; --source) transfers.push_back({source, 0});
  expect_round_delivers(*backend, PeerRound(transfers, n), kOddMessageBytes);
}

TEST(MpiPeerExchange, LoopbackOnTheLastRank) {
  auto backend = world_backend();
  const int n = backend->ranks();
  expect_round_delivers(*backend, PeerRound({{n - 1, n - 1}}, n), kOddMessageBytes);
}

TEST(MpiPeerExchange, OddRankOutOfThreeIdles) {
  auto world = world_backend();
  const int rank = world->group().rank();
  if (world->ranks() < 3) GTEST_SKIP() << "three ranks needed";
  // A communicator of three (from a split, as a pattern's sub-group would be): pair (0,1)
  // exchanges while rank 2 of it has nothing to do.
  auto three = world->split(rank < 3 ? 0 : 1, rank);
  if (rank < 3) {
    ASSERT_EQ(three->ranks(), 3);
    const std::pair<int, int> pair[] = {{0, 1}};
    expect_round_delivers(*three, PeerRound::both_ways(pair, 3), kOddMessageBytes);
  }
  world->group().barrier();
}

TEST(MpiPeerExchange, ARoundForAnotherCommunicatorSizeIsRefused) {
  auto backend = world_backend();
  const int n = backend->ranks();
  EXPECT_THROW(backend->peer_exchange(PeerRound({}, n + 1), 8), UsageError);
}

}  // namespace
}  // namespace commbench
