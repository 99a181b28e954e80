#include "commbench/runner/watchdog.hpp"

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "commbench/core/error.hpp"

namespace commbench {
void Watchdog::print_and_exit(const std::string& message) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s\n", message.c_str());
  std::fflush(stderr);
  std::_Exit(static_cast<int>(ExitCode::timeout));
}

namespace {

std::string seconds_text(std::chrono::nanoseconds d) {
  std::ostringstream out;
  out << std::chrono::duration<double>(d).count();
  return out.str();
}

}  // namespace

Watchdog::Watchdog(double timeout_seconds, std::string program, std::string who, ExpiryAction on_expiry)
    : timeout_(std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::duration<double>(timeout_seconds > 0 ? timeout_seconds : 0))),
      program_(std::move(program)),
      who_(std::move(who)),
      on_expiry_(on_expiry ? std::move(on_expiry) : ExpiryAction(&Watchdog::print_and_exit)) {
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

Watchdog::Guard Watchdog::guard(const std::string& step) {
  if (!enabled()) return Guard(nullptr);
  {
    std::lock_guard lock(mutex_);
    armed_ = true;
    step_ = step;
    deadline_ = std::chrono::steady_clock::now() + timeout_;
  }
  changed_.notify_all();
  return Guard(this);
}

void Watchdog::disarm() {
  {
    std::lock_guard lock(mutex_);
    armed_ = false;
  }
  changed_.notify_all();
}

void Watchdog::watch() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (!armed_) {
      changed_.wait(lock);
      continue;
    }
    const auto deadline = deadline_;
    if (changed_.wait_until(lock, deadline) == std::cv_status::timeout && armed_ && deadline_ == deadline) {
      const std::string message = program_ + ": timeout: " + who_ + ": " + step_ + " did not complete within " +
                                  seconds_text(timeout_) + " s (-T/--timeout)";
      armed_ = false;
      lock.unlock();
      on_expiry_(message);
      lock.lock();
    }
  }
}

}  // namespace commbench
