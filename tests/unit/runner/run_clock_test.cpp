// The run's clock after a signal: the overdue action waits for the grace, unless no one is
// left to agree with (rank 0 has written the job's files and ended), when it runs at once.
#include "commbench/runner/run_clock.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <functional>
#include <thread>
#include <utility>

#include "commbench/runner/interruption.hpp"

namespace commbench {
namespace {

// Longer than any test lasts: an overdue action that runs came from no_one_left_to_agree.
constexpr std::chrono::hours kGraceNeverReached{1};

void record_sigterm() {
  ASSERT_TRUE(install_interruption_handlers());
  kill(getpid(), SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (pending_interruption() == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ(pending_interruption(), SIGTERM);
}

// Waits (bounded generously: a loaded machine only delays) until `ran` holds a signal.
int signal_seen(const std::atomic<int>& ran, std::chrono::milliseconds bound) {
  const auto deadline = std::chrono::steady_clock::now() + bound;
  while (ran.load() == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return ran.load();
}

// A clock whose grace never ends in a test, whose overdue action records its signal in `ran`.
RunClock clock_recording(std::atomic<int>& ran, std::function<bool()> no_one_left_to_agree) {
  return RunClock(std::chrono::duration_cast<std::chrono::milliseconds>(kGraceNeverReached),
                  RunClock::Actions{.tick = {},
                                    .overdue_stop =
                                        [&ran](int signal) {
                                          ran = signal;
                                          return true;
                                        },
                                    .no_one_left_to_agree = std::move(no_one_left_to_agree)});
}

TEST(RunClock, NoOneLeftToAgreeSkipsTheGrace) {
  record_sigterm();
  std::atomic<int> ran{0};
  {
    const RunClock clock = clock_recording(ran, [] { return true; });
    EXPECT_EQ(signal_seen(ran, std::chrono::seconds(30)), SIGTERM);
  }
  clear_interruption();
}

TEST(RunClock, OthersStillToAgreeWaitForTheGrace) {
  record_sigterm();
  std::atomic<int> ran{0};
  std::atomic<int> asked{0};
  {
    const RunClock clock = clock_recording(ran, [&asked] {
      ++asked;
      return false;
    });
    // Several ticks: the clock asked, and did not end the run.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (asked.load() < 3 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_GE(asked.load(), 3);
    EXPECT_EQ(ran.load(), 0);
  }
  clear_interruption();
}

}  // namespace
}  // namespace commbench
