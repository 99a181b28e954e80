#include "commbench/runner/watchdog.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "commbench/core/error.hpp"
#include "commbench/core/number_text.hpp"

namespace commbench {
void Watchdog::print_and_exit(const std::string& message, std::chrono::milliseconds linger) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s\n", message.c_str());
  std::fflush(stderr);
  if (linger.count() > 0) std::this_thread::sleep_for(linger);
  std::_Exit(static_cast<int>(ExitCode::timeout));
}

void Watchdog::attach_heartbeat(HeartbeatChannel* channel, std::vector<std::string> hosts) {
  std::lock_guard lock(mutex_);
  heartbeat_ = channel;
  hosts_ = std::move(hosts);
}

void Watchdog::attach_arrivals(const ArrivalBoard* board) {
  std::lock_guard lock(mutex_);
  arrivals_ = board;
}

void Watchdog::set_identity(std::string who) {
  std::lock_guard lock(mutex_);
  who_ = std::move(who);
}

std::chrono::nanoseconds Watchdog::silence_threshold() const {
  return std::max<std::chrono::nanoseconds>(3 * poll_, std::chrono::seconds(2));
}

namespace {

std::string seconds_text(std::chrono::nanoseconds d) {
  return significant_text(std::chrono::duration<double>(d).count());
}

}  // namespace

Watchdog::Watchdog(double timeout_seconds, std::string program, std::string who, ExpiryAction on_expiry)
    : timeout_(std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::duration<double>(timeout_seconds > 0 ? timeout_seconds : 0))),
      program_(std::move(program)),
      who_(std::move(who)),
      on_expiry_(on_expiry ? std::move(on_expiry)
                           : ExpiryAction([](const std::string& m) { Watchdog::print_and_exit(m); })) {
  // A tenth of the timeout, between 10 ms and 1 s.
  poll_ = std::clamp<std::chrono::nanoseconds>(timeout_ / 10, std::chrono::milliseconds(10), std::chrono::seconds(1));
  if (enabled()) thread_ = std::thread([this] { watch(); });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

// Arming and disarming only write under an uncontended lock and never wake the watchdog
// thread: they happen around every batch and agreement, and on a machine with more
// ranks than cores a wake-up per step costs context switches inside the measurement.
// The thread polls instead, so a step expires within timeout + poll interval.
Watchdog::Guard Watchdog::guard(const std::string& step) { return guard(step, timeout_); }

Watchdog::Guard Watchdog::guard(const std::string& step, std::chrono::nanoseconds at_least) {
  if (!enabled()) {
    stall_hook_.at_step(own_rank_, step);
    return Guard(nullptr);
  }
  {
    std::lock_guard lock(mutex_);
    armed_ = true;
    step_ = step;
    step_limit_ = std::max(timeout_, at_least);
    ++sequence_;
    deadline_ = std::chrono::steady_clock::now() + step_limit_;
  }
  stall_hook_.at_step(own_rank_, step);
  return Guard(this);
}

void Watchdog::disarm() {
  std::lock_guard lock(mutex_);
  armed_ = false;
}

void Watchdog::watch() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    changed_.wait_for(lock, poll_);
    if (stopping_) break;
    if (heartbeat_ != nullptr) heartbeat_->send(sequence_, armed_ ? step_ : "between steps");
    if (!armed_ || std::chrono::steady_clock::now() < deadline_) continue;
    const std::string raised =
        step_limit_ > timeout_ ? fmt::format(" {}, raised for this step", seconds_text(timeout_)) : std::string();
    std::string message = fmt::format("{}: timeout: {}: {} did not complete within {} s (-T/--timeout{})", program_, who_,
                                      step_, seconds_text(step_limit_), raised);
    if (heartbeat_ != nullptr && heartbeat_->collecting())
      message += "; " + describe_stragglers(heartbeat_->snapshot(), hosts_, sequence_, std::chrono::steady_clock::now(),
                                            silence_threshold());
    else if (arrivals_ != nullptr && !arrivals_->describe().empty())
      message += "; " + arrivals_->describe();
    armed_ = false;
    lock.unlock();
    on_expiry_(message);
    lock.lock();
  }
}

}  // namespace commbench
