// When each rank arrived at a call, and how long the others waited for the last.
// Where the ranks' clocks are comparable (one host, or torch.profiler's epoch on every
// trace) a rank arrives when it called: DDP issues its buckets asynchronously, so a rank
// that comes late issues every bucket late, while only the first bucket's duration shows
// it. Elsewhere arrival is read from the backend's durations: every rank's run of a call
// ends together, so the rank that came last ran shortest; that needs no shared clock.
#pragma once

#include <cstddef>
#include <vector>

#include "commbench/replay/communication_trace.hpp"

namespace commbench {

// How the ranks' times compare: the offset that puts each trace's times on one clock,
// where they can be put on one.
struct ArrivalClock {
  bool comparable = false;
  bool on_the_epoch = false;      // by baseTimeNanoseconds, not by a shared host
  std::vector<double> offset_us;  // per trace, added to its times
};

ArrivalClock arrival_clock(const std::vector<RankTrace>& traces);

// One call matched across the ranks: how long each rank took and waited, who came last.
struct CallTiming {
  std::vector<double> arrivals;   // seconds: on the common clock, or where durations say it, less each duration
  std::vector<double> durations;  // seconds
  std::vector<double> waits;      // seconds each rank waited for the last one
  std::size_t last = 0;           // the rank that arrived last
  double lateness = 0;            // seconds it came after the others' median
  double spread = 0;              // seconds the others' arrivals lie from their median, on average
  double shortest = 0;            // the shortest duration: the call's run once every rank was there
};

// The i-th call of every trace; `by_issue`: arrival is when each rank called it (on
// `clock`), else its duration says it.
CallTiming call_timing(const std::vector<RankTrace>& traces, std::size_t i, bool by_issue, const ArrivalClock& clock);

}  // namespace commbench
