// Each rank's waiting for the last rank to arrive, and the waiting its own lateness cost
// the others, added call by call. Where durations say who came last, the waits are parts
// of the calls' own time and are summed. Where arrival is when each rank called, a rank's
// asynchronous calls can wait at the same time (DDP issues every bucket before the first is
// served): their waits are then time, each instant counted once.
#pragma once

#include <cstddef>
#include <map>
#include <vector>

#include "call_arrival.hpp"
#include "commbench/replay/trace_summary.hpp"
#include "time_intervals.hpp"

namespace commbench {

class WaitTally {
 public:
  explicit WaitTally(std::size_t ranks);
  // One call, of profiler step `step` (-1 none); `by_issue`: its arrivals are when each
  // rank called, on one clock.
  void add(const CallTiming& timing, bool by_issue, int step);
  // Sets each rank's wait_seconds, last_arrivals, lateness_seconds and caused_wait_seconds.
  void fill(std::vector<RankTraceSummary>& ranks) const;
  // Per rank, the others' spread summed over the calls it arrived last at.
  const std::vector<double>& spread_seconds() const { return spread_; }
  // The ranks' mean waiting in the calls of one step.
  double step_wait_seconds(int step) const;

 private:
  std::size_t ranks_;
  std::vector<double> waited_, caused_;                    // summed, seconds
  std::vector<std::vector<TimeInterval>> waiting_;         // per rank
  std::vector<std::vector<TimeInterval>> caused_waiting_;  // per last rank and waiting rank
  std::vector<std::size_t> last_arrivals_;
  std::vector<double> lateness_, spread_;                               // summed over the calls it came last to
  std::map<int, double> step_waited_;                                   // summed, the ranks' mean
  std::map<int, std::vector<std::vector<TimeInterval>>> step_waiting_;  // per step and rank
};

}  // namespace commbench
