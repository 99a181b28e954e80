#include "commbench/runner/run_clock.hpp"

#include <optional>
#include <utility>

#include "commbench/runner/interruption.hpp"

namespace commbench {

RunClock::RunClock(std::chrono::milliseconds grace, Actions actions)
    : grace_(grace), actions_(std::move(actions)), thread_([this] { run(); }) {}

RunClock::~RunClock() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

bool RunClock::no_one_left() const { return actions_.no_one_left_to_agree && actions_.no_one_left_to_agree(); }

void RunClock::run() {
  std::optional<std::chrono::steady_clock::time_point> signalled;
  bool overdue_done = false;
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    changed_.wait_for(lock, kTick);
    if (stopping_) break;
    lock.unlock();
    const auto now = std::chrono::steady_clock::now();
    if (actions_.tick) actions_.tick();
    const int signal = pending_interruption();
    if (signal != 0 && !signalled) signalled = now;
    if (signalled && !overdue_done && actions_.overdue_stop && (now - *signalled >= grace_ || no_one_left()))
      overdue_done = actions_.overdue_stop(signal);
    lock.lock();
  }
}

}  // namespace commbench
