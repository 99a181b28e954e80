#include "call_arrival.hpp"

#include <algorithm>
#include <cmath>

#include "commbench/core/statistics.hpp"

namespace commbench {

ArrivalClock arrival_clock(const std::vector<RankTrace>& traces) {
  ArrivalClock clock;
  clock.offset_us.assign(traces.size(), 0.0);
  const bool one_host = std::all_of(traces.begin(), traces.end(), [&](const RankTrace& t) {
    return !t.host.empty() && t.host == traces.front().host;
  });
  clock.on_the_epoch =
      std::all_of(traces.begin(), traces.end(), [](const RankTrace& t) { return t.epoch_offset_us.has_value(); });
  clock.comparable = one_host || clock.on_the_epoch;
  if (clock.on_the_epoch)
    for (std::size_t r = 0; r < traces.size(); ++r) clock.offset_us[r] = *traces[r].epoch_offset_us;
  return clock;
}

CallTiming call_timing(const std::vector<RankTrace>& traces, std::size_t i, bool by_issue, const ArrivalClock& clock) {
  CallTiming timing;
  std::vector<double>& arrivals = timing.arrivals;
  for (std::size_t r = 0; r < traces.size(); ++r) {
    const TracedCollective& call = traces[r].collectives[i];
    timing.durations.push_back(call.seconds());
    arrivals.push_back(by_issue ? (call.issued_us + clock.offset_us[r]) * 1e-6 : -timing.durations.back());
  }
  timing.last = static_cast<std::size_t>(std::max_element(arrivals.begin(), arrivals.end()) - arrivals.begin());
  timing.shortest = *std::min_element(timing.durations.begin(), timing.durations.end());
  std::vector<double> others;
  for (std::size_t r = 0; r < arrivals.size(); ++r) {
    timing.waits.push_back(arrivals[timing.last] - arrivals[r]);
    if (r != timing.last) others.push_back(arrivals[r]);
  }
  if (others.empty()) return timing;
  const double median = median_of(others);
  timing.lateness = arrivals[timing.last] - median;
  for (const double arrival : others) timing.spread += std::abs(arrival - median) / static_cast<double>(others.size());
  return timing;
}

}  // namespace commbench
