#include "commbench/backend/host_compute.hpp"

#include <pthread.h>
#include <sched.h>

namespace commbench {
namespace {

using Clock = std::chrono::steady_clock;

class HostComputePending final : public PendingOperation {
 public:
  explicit HostComputePending(Clock::time_point end) : end_(end) {}
  bool test() override { return Clock::now() >= end_; }
  void wait() override {
    // Sleeping rather than yielding: a thread woken by its timer preempts a busy one at
    // once, while a yielding one may wait out another thread's whole slice.
    std::this_thread::sleep_until(end_);
    while (!test()) {
    }
  }

 private:
  Clock::time_point end_;
};

// SCHED_IDLE rather than nice 19: a niced thread keeps the core until its slice ends when
// the MPI thread wakes or wants it back (EEVDF runs the current thread to parity), while an
// idle-class thread yields it at once. Failing to lower the class only costs overlap on
// an oversubscribed node, so the result is ignored.
void lower_this_threads_priority() {
  sched_param parameters{};
  parameters.sched_priority = 0;
  (void)pthread_setschedparam(pthread_self(), SCHED_IDLE, &parameters);
}

// Busy until `end`: this is the compute the stand-in stands for. It offers the core back
// every 50 us: an MPI library on an oversubscribed node yields in every progress call,
// and under EEVDF a yield can hand the core to this thread for a whole slice (even in the
// idle class), stalling communication on every rank. Where the thread has a core of its
// own, the yield returns at once.
void spin_until(Clock::time_point end, const std::atomic<bool>& stopping) {
  constexpr auto kBurst = std::chrono::microseconds(50);
  for (Clock::time_point now = Clock::now(); now < end && !stopping.load(std::memory_order_relaxed);
       now = Clock::now()) {
    const Clock::time_point burst_end = std::min(end, now + kBurst);
    while (Clock::now() < burst_end) {
    }
    std::this_thread::yield();
  }
}

}  // namespace

HostComputeStandIn::HostComputeStandIn() : thread_([this] { work(); }) {}

HostComputeStandIn::~HostComputeStandIn() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  queued_.notify_all();
  thread_.join();
}

std::string HostComputeStandIn::occupies() const {
  return "one host thread per rank busy-waiting in the idle scheduling class (SCHED_IDLE) beside the thread that "
         "drives MPI";
}

std::unique_ptr<PendingOperation> HostComputeStandIn::start(double seconds) {
  const auto duration = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  Clock::time_point end;
  {
    std::lock_guard lock(mutex_);
    end = std::max(Clock::now(), last_end_) + duration;
    last_end_ = end;
    ends_.push_back(end);
  }
  queued_.notify_one();
  return std::make_unique<HostComputePending>(end);
}

double HostComputeStandIn::measure_uncorrected(double seconds) {
  const Clock::time_point begin = Clock::now();
  start(seconds)->wait();
  return std::chrono::duration<double>(Clock::now() - begin).count();
}

void HostComputeStandIn::work() {
  lower_this_threads_priority();
  std::unique_lock lock(mutex_);
  for (;;) {
    queued_.wait(lock, [this] { return stopping_ || !ends_.empty(); });
    if (stopping_) return;
    const Clock::time_point end = ends_.front();
    ends_.pop_front();
    lock.unlock();
    spin_until(end, stopping_);
    lock.lock();
  }
}

}  // namespace commbench
