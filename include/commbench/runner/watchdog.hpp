// Ends the process when one step (an operation batch, a barrier) takes longer than the
// timeout, after saying on stderr which rank, host and step it was. A benchmark that
// hangs silently until the scheduler kills it tells nobody which node is bad.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace commbench {

class Watchdog {
 public:
  // Called on the watchdog thread with the message when a step expires. The default
  // prints it and ends the process with exit code 4.
  using ExpiryAction = std::function<void(const std::string& message)>;

  // timeout_seconds <= 0 disables the watchdog. `who` names this rank in messages,
  // such as "rank 2 (host node07)".
  Watchdog(double timeout_seconds, std::string program, std::string who, ExpiryAction on_expiry = {});
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  bool enabled() const { return timeout_ > std::chrono::nanoseconds::zero(); }

  // The default expiry action: flush, print the message to stderr, _Exit(4).
  [[noreturn]] static void print_and_exit(const std::string& message);

  // Arms the watchdog for one step until the guard goes out of scope.
  class Guard {
   public:
    Guard(Guard&& other) noexcept : owner_(other.owner_) { other.owner_ = nullptr; }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;
    ~Guard() {
      if (owner_ != nullptr) owner_->disarm();
    }

   private:
    friend class Watchdog;
    explicit Guard(Watchdog* owner) : owner_(owner) {}
    Watchdog* owner_;
  };
  [[nodiscard]] Guard guard(const std::string& step);

 private:
  void disarm();
  void watch();

  std::chrono::nanoseconds timeout_;
  std::string program_;
  std::string who_;
  ExpiryAction on_expiry_;
  std::mutex mutex_;
  std::condition_variable changed_;  // notified only when stopping
  bool armed_ = false;
  bool stopping_ = false;
  std::string step_;
  std::chrono::steady_clock::time_point deadline_;
  std::thread thread_;
};

}  // namespace commbench
