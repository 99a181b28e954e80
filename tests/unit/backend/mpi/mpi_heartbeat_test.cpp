// Runs under mpirun with 1, 2 and 4 ranks: the heartbeat channel's word back from rank 0,
// which a stop that cannot wait for the ranks' agreement relies on (no rank may exit
// before rank 0 has written its files).
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <thread>

#include "commbench/backend/mpi/mpi_backend.hpp"
#include "commbench/runner/heartbeat.hpp"

namespace commbench {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// No rank beats here: a rank stopped before its first heartbeat (a stalled process that
// the launcher wakes to end it) still takes the word, queued for it.
TEST(HeartbeatWordBack, EveryRankHearsThatRankZerosResultsAreWritten) {
  mpi::MpiBootstrap world(MPI_COMM_WORLD);
  auto channel = HeartbeatChannel::open(world);
  ASSERT_NE(channel, nullptr);
  world.barrier();
  if (world.rank() == 0) {
    channel->say_results_written();
    EXPECT_FALSE(channel->wait_for_results_written(50ms)) << "rank 0 waits for no one";
  } else {
    std::this_thread::sleep_for(100ms);  // the word is said before this rank waits for it
    // True only when the word came: at the bound the wait says false.
    EXPECT_TRUE(channel->wait_for_results_written(30s));
    // Once heard, a look without waiting says so too (a rank held behind asks on every tick).
    EXPECT_TRUE(channel->wait_for_results_written(0ms));
  }
  world.barrier();
}

TEST(HeartbeatWordBack, WithoutTheWordTheWaitEndsAtItsBound) {
  mpi::MpiBootstrap world(MPI_COMM_WORLD);
  auto channel = HeartbeatChannel::open(world);
  ASSERT_NE(channel, nullptr);
  if (world.rank() != 0) {
    EXPECT_FALSE(channel->wait_for_results_written(0ms));
    const auto started = Clock::now();
    EXPECT_FALSE(channel->wait_for_results_written(200ms));
    EXPECT_GE(Clock::now() - started, 200ms);
  }
  world.barrier();
}

}  // namespace
}  // namespace commbench
