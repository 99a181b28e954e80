// The run's clock: a thread that ticks a few times a second beside the work, so that what
// must happen on time happens even while the work is inside one long step (a warm-up
// step of a large model, an allocation, a tuning trial). It prints the phases' progress,
// and it bounds how long a signal may wait: the ranks stop together at their next
// agreement (the measurement loop's), and where none comes within the grace the
// overdue action ends the run itself, so SIGTERM is answered before the launcher's
// SIGKILL whatever the phase.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace commbench {

class RunClock {
 public:
  struct Actions {
    std::function<void()> tick;                      // each tick; may be empty
    // A grace after a signal, unless the clock is gone by then (the run ended); false
    // when the run cannot be ended from here yet (asked again each tick).
    std::function<bool(int signal)> overdue_stop;
    // True once no agreement can come any more (the reporting rank has written the job's
    // files and ended): the overdue action then runs at the next tick, without the grace,
    // which would only delay a rank the launcher woke to end. May be empty.
    std::function<bool()> no_one_left_to_agree;
  };
  static constexpr std::chrono::milliseconds kTick{50};

  RunClock(std::chrono::milliseconds grace, Actions actions);
  ~RunClock();
  RunClock(const RunClock&) = delete;
  RunClock& operator=(const RunClock&) = delete;

 private:
  void run();
  bool no_one_left() const;

  std::chrono::milliseconds grace_;
  Actions actions_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool stopping_ = false;
  std::thread thread_;  // last: it reads the members above
};

}  // namespace commbench
