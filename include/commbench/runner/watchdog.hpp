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
#include <vector>

#include "commbench/backend/arrival_census.hpp"
#include "commbench/runner/heartbeat.hpp"
#include "commbench/runner/stall_hook.hpp"

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

  // The default expiry action: flush, print the message to stderr, wait `linger` (so a
  // rank 0 that is collecting heartbeats gets its report out before the launcher tears
  // the job down), _Exit(4).
  [[noreturn]] static void print_and_exit(const std::string& message,
                                          std::chrono::milliseconds linger = std::chrono::milliseconds(0));

  // Heartbeats go out on every poll; on rank 0 (the collector) an expiry message also
  // says which ranks are silent or behind. `hosts` is indexed by rank.
  void attach_heartbeat(HeartbeatChannel* channel, std::vector<std::string> hosts);
  // Before the heartbeat channel exists: on rank 0, an expiry message names the ranks
  // that have not arrived at the step (the board's census); null for none.
  void attach_arrivals(const ArrivalBoard* board);
  // Renames this rank in messages once more is known (its GPUs, after the backend exists).
  void set_identity(std::string who);
  // How long a rank may be silent before rank 0 calls it not responding.
  std::chrono::nanoseconds silence_threshold() const;

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
  // The same for a step that needs at least `at_least` whatever -T says (MPI start-up,
  // where ending a rank while the launcher is still starting the others can hang it).
  [[nodiscard]] Guard guard(const std::string& step, std::chrono::nanoseconds at_least);

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
  std::chrono::nanoseconds step_limit_{};  // the armed step's limit: timeout_ or more
  std::uint64_t sequence_ = 0;  // guarded steps so far: the same on every rank
  std::chrono::steady_clock::time_point deadline_;
  std::chrono::nanoseconds poll_{};
  HeartbeatChannel* heartbeat_ = nullptr;
  std::vector<std::string> hosts_;
  const ArrivalBoard* arrivals_ = nullptr;
  StallHook stall_hook_ = StallHook::from_environment();
  int own_rank_ = launcher_rank_or_zero();
  std::thread thread_;
};

}  // namespace commbench
