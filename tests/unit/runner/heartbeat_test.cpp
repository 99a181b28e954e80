#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "commbench/backend/local_bootstrap.hpp"
#include "commbench/runner/heartbeat.hpp"

namespace commbench {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

RankHeartbeat beat(Clock::time_point when, std::uint64_t step, const char* name) {
  return RankHeartbeat{true, when, step, name};
}

TEST(Stragglers, SilentRanksAreNamedWithHostAndLastStep) {
  const auto now = Clock::now();
  const std::vector<RankHeartbeat> ranks{beat(now, 7, "stop agreement"), beat(now - 6500ms, 7, "timed batch"),
                                         beat(now, 7, "stop agreement"), RankHeartbeat{}};
  EXPECT_EQ(describe_stragglers(ranks, {"a", "b", "c", "d"}, 7, now, 2s),
            "not responding: rank 1 (host b) silent for 6.5 s, last in timed batch, rank 3 (host d) never reported");
}

TEST(Stragglers, RanksInAnEarlierStepAreBehind) {
  const auto now = Clock::now();
  const std::vector<RankHeartbeat> ranks{beat(now, 9, "barrier"), beat(now, 8, "warm-up"), beat(now, 9, "barrier")};
  EXPECT_EQ(describe_stragglers(ranks, {"a", "b", "c"}, 9, now, 2s), "behind: rank 1 (host b) still in warm-up");
}

TEST(Stragglers, EveryoneHereMeansTheOperationIsStuck) {
  const auto now = Clock::now();
  const std::vector<RankHeartbeat> ranks{beat(now, 3, "x"), beat(now - 1s, 3, "x")};
  EXPECT_EQ(describe_stragglers(ranks, {"a", "b"}, 3, now, 2s),
            "every rank is alive and in this step: the operation itself is stuck (network, driver or library)");
}

TEST(HeartbeatChannel, DatagramsReachTheCollectorOverLoopback) {
  LocalBootstrap alone;
  auto channel = HeartbeatChannel::open(alone);
  ASSERT_NE(channel, nullptr);
  ASSERT_TRUE(channel->collecting());
  const auto deadline = Clock::now() + 5s;
  RankHeartbeat seen;
  while (Clock::now() < deadline && !seen.heard) {
    channel->send(42, "allreduce 1MiB float sum out-of-place (timed batch, 3 iterations)");
    std::this_thread::sleep_for(20ms);
    seen = channel->snapshot().at(0);
  }
  ASSERT_TRUE(seen.heard);
  EXPECT_EQ(seen.step, 42u);
  EXPECT_EQ(seen.step_name, "allreduce 1MiB float sum out-of-place (timed batch, 3 iterations)");
}

}  // namespace
}  // namespace commbench

namespace commbench {
namespace {

TEST(RankLabels, HostsWithTheGpusEachRankDrives) {
  EXPECT_EQ(rank_labels({"gpu01", "gpu01", "gpu02"}, {{"0000:1b:00.0"}, {"0000:2c:00.0", "0000:3d:00.0"}, {}}),
            (std::vector<std::string>{"gpu01, GPU 0000:1b:00.0", "gpu01, GPUs 0000:2c:00.0 0000:3d:00.0", "gpu02"}));
  // Host ranks (MPI backend) keep their host names; so does a short bus-id list.
  EXPECT_EQ(rank_labels({"a", "b"}, {{}, {}}), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(rank_labels({"a", "b"}, {{"0000:1b:00.0"}}), (std::vector<std::string>{"a, GPU 0000:1b:00.0", "b"}));
  // describe_stragglers puts them after "host".
  std::vector<RankHeartbeat> ranks(2);
  ranks[0] = RankHeartbeat{true, std::chrono::steady_clock::now(), 5, "timing"};
  const std::string text = describe_stragglers(ranks, rank_labels({"n1", "n2"}, {{"0000:1b:00.0"}, {"0000:2c:00.0"}}),
                                               5, std::chrono::steady_clock::now(), std::chrono::seconds(2));
  EXPECT_EQ(text, "not responding: rank 1 (host n2, GPU 0000:2c:00.0) never reported");
}

}  // namespace
}  // namespace commbench
