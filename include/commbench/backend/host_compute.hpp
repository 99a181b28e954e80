// The host compute stand-in: busy-waits on a thread of its own, so the thread that drives
// MPI keeps calling MPI_Test on outstanding requests and communication really progresses
// during the "compute" (a busy-wait on the MPI thread would stall it: most MPI libraries
// progress only inside MPI calls).
//
// Each task's end is fixed when it is started: the requested duration after the later of
// now and the previous task's end (tasks run one after another, like kernels on one
// stream). The compute thread spins until that end in the idle scheduling class, offering
// the core back every 50 us: on a node with fewer cores than ranks x 2 it never holds a
// core the MPI thread wants, which would slow communication for a reason a GPU's compute
// does not have, and losing the core does not stretch the task, whose end is wall-clock
// time. With a core of its own it simply keeps that core busy.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "commbench/backend/backend.hpp"
#include "commbench/backend/compute_standin.hpp"

namespace commbench {

class HostComputeStandIn final : public ComputeStandIn {
 public:
  HostComputeStandIn();  // starts the compute thread
  // Stops the thread at once: a task's pending completes by the clock, not by the thread.
  ~HostComputeStandIn() override;

  std::string occupies() const override;
  double measure_uncorrected(double seconds) override;

  // Queues a busy-wait of `seconds` (taken as given: apply corrected_request() first).
  // The pending completes at the task's end, as seen by whoever tests it.
  std::unique_ptr<PendingOperation> start(double seconds);

 private:
  using Clock = std::chrono::steady_clock;
  void work();

  std::mutex mutex_;
  std::condition_variable queued_;
  std::deque<Clock::time_point> ends_;  // of the tasks the compute thread has yet to spin through
  Clock::time_point last_end_{};
  std::atomic<bool> stopping_{false};  // read by the spinning thread without the lock
  std::thread thread_;                 // last: starts once the members it uses exist
};

}  // namespace commbench
