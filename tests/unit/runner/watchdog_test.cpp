#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>

#include "commbench/runner/watchdog.hpp"

namespace commbench {
namespace {

using namespace std::chrono_literals;

struct Recorder {
  std::mutex mutex;
  std::string message;
  std::atomic<int> calls{0};
  Watchdog::ExpiryAction action() {
    return [this](const std::string& m) {
      std::lock_guard lock(mutex);
      message = m;
      ++calls;
    };
  }
};

TEST(Watchdog, ExpiresNamingRankAndStep) {
  Recorder recorder;
  Watchdog dog(0.05, "bench-collectives", "rank 2 (host node07)", recorder.action());
  {
    auto guard = dog.guard("allreduce 1MiB float sum out-of-place");
    std::this_thread::sleep_for(300ms);
  }
  ASSERT_EQ(recorder.calls.load(), 1);
  EXPECT_EQ(recorder.message,
            "bench-collectives: timeout: rank 2 (host node07): allreduce 1MiB float sum out-of-place did not complete "
            "within 0.05 s (-T/--timeout)");
}

TEST(Watchdog, ANewIdentityNamesTheRankFromThenOn) {
  Recorder recorder;
  Watchdog dog(0.05, "bench-collectives", "rank 2 (host node07)", recorder.action());
  dog.set_identity("rank 2 (host node07, GPU 0000:1b:00.0)");
  {
    auto guard = dog.guard("timing");
    std::this_thread::sleep_for(300ms);
  }
  ASSERT_EQ(recorder.calls.load(), 1);
  EXPECT_EQ(recorder.message.rfind("bench-collectives: timeout: rank 2 (host node07, GPU 0000:1b:00.0): timing ", 0),
            0u)
      << recorder.message;
}

TEST(Watchdog, QuietWhenStepsFinishInTime) {
  Recorder recorder;
  Watchdog dog(0.2, "p", "rank 0", recorder.action());
  for (int i = 0; i < 20; ++i) {
    auto guard = dog.guard("step " + std::to_string(i));
    std::this_thread::sleep_for(20ms);  // 400 ms in all, each step well inside 200 ms
  }
  std::this_thread::sleep_for(300ms);  // disarmed: nothing may fire now
  EXPECT_EQ(recorder.calls.load(), 0);
}

TEST(Watchdog, DisabledWithZeroTimeout) {
  Recorder recorder;
  Watchdog dog(0, "p", "rank 0", recorder.action());
  EXPECT_FALSE(dog.enabled());
  auto guard = dog.guard("anything");
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(recorder.calls.load(), 0);
}

}  // namespace
}  // namespace commbench
