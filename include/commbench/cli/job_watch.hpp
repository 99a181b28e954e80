// The watchdog of a whole job, from before MPI starts until after it ends: MPI start-up,
// joining the ranks, creating communicators, every measurement and agreement, writing the
// results and finalizing MPI all run under it, so a rank that stalls anywhere ends the
// job with exit 4 and a line naming the step instead of a silent hang. The job session
// tells it more as it learns more: the backend to abort, the heartbeat channel, each
// rank's GPUs.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "commbench/backend/backend.hpp"
#include "commbench/runner/watchdog.hpp"

namespace commbench {

class JobWatch {
 public:
  // Names this rank by its launcher rank and host until the job's ranks are known.
  JobWatch(const std::string& program, double timeout_seconds);
  JobWatch(const JobWatch&) = delete;
  JobWatch& operator=(const JobWatch&) = delete;

  Watchdog& watchdog() { return watchdog_; }
  double timeout_seconds() const { return timeout_seconds_; }
  // Aborted (NCCL communicators) before the process ends on a timeout; null for none.
  // Waits for an abort in progress, so the backend can be destroyed once this returns.
  void set_backend(Backend* backend);
  // How long a rank waits after its own timeout line before exiting, so the launcher
  // does not tear rank 0 down before rank 0 has named the stragglers.
  void set_linger(std::chrono::milliseconds linger) { linger_ms_.store(linger.count()); }
  // Keeps the job's heartbeat channel until after MPI_Finalize (it needs no MPI), so a
  // rank that stalls while finalizing is named too. `labels` names each rank.
  void adopt_heartbeat(std::unique_ptr<HeartbeatChannel> channel, std::vector<std::string> labels);
  // A stop that cannot wait for the ranks' agreement: rank 0 says its files are written,
  // the other ranks wait for that word (without a heartbeat channel, the whole `within`).
  void say_results_written();
  void wait_for_results_written(std::chrono::milliseconds within);
  // Whether rank 0 has said so already (never on rank 0, nor without a channel).
  bool results_written_said();
  // Renames the ranks in rank 0's account of stragglers (with their GPUs, say).
  void relabel_ranks(std::vector<std::string> labels);
  // Rank 0's census of who arrived at the steps before the heartbeat channel exists.
  ArrivalBoard& arrivals() { return arrivals_; }
  // Called on a timeout, after the backend's abort and before the process ends, so the
  // result files are closed (complete: false) with what they hold; empty for none.
  // Runs on the watchdog's thread: it must not wait for the stalled main thread.
  void set_expiry_report(std::function<void()> report);

 private:
  double timeout_seconds_;
  std::mutex backend_mutex_;  // held while aborting and while the backend changes
  Backend* backend_ = nullptr;
  std::function<void()> expiry_report_;  // guarded by backend_mutex_
  std::atomic<long long> linger_ms_{0};
  std::unique_ptr<HeartbeatChannel> heartbeat_;
  ArrivalBoard arrivals_;
  Watchdog watchdog_;  // last: its thread reads the members above
};

}  // namespace commbench
