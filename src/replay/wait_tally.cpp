#include "wait_tally.hpp"

namespace commbench {

WaitTally::WaitTally(std::size_t ranks)
    : ranks_(ranks),
      waited_(ranks, 0.0),
      caused_(ranks, 0.0),
      waiting_(ranks),
      caused_waiting_(ranks * ranks),
      last_arrivals_(ranks, 0),
      lateness_(ranks, 0.0),
      spread_(ranks, 0.0) {}

void WaitTally::add(const CallTiming& timing, bool by_issue, int step) {
  // Arrivals at one time (a tie) name no rank last.
  const bool late = ranks_ > 1 && timing.lateness > 0;
  const std::size_t last = timing.last;
  std::vector<std::vector<TimeInterval>>& step_waiting = step_waiting_[step];
  step_waiting.resize(ranks_);
  for (std::size_t r = 0; r < ranks_; ++r) {
    const double wait = timing.waits[r];
    if (!by_issue) {
      waited_[r] += wait;
      step_waited_[step] += wait / static_cast<double>(ranks_);
      if (late) caused_[last] += wait;
    } else if (wait > 0) {
      const TimeInterval interval{timing.arrivals[r], timing.arrivals[last]};
      add_interval(waiting_[r], interval);
      add_interval(step_waiting[r], interval);
      if (late) add_interval(caused_waiting_[last * ranks_ + r], interval);
    }
  }
  if (!late) return;
  ++last_arrivals_[last];
  lateness_[last] += timing.lateness;
  spread_[last] += timing.spread;
}

double WaitTally::step_wait_seconds(int step) const {
  double seconds = 0;
  if (const auto summed = step_waited_.find(step); summed != step_waited_.end()) seconds += summed->second;
  if (const auto waiting = step_waiting_.find(step); waiting != step_waiting_.end())
    for (const std::vector<TimeInterval>& rank : waiting->second)
      seconds += total_length(merged_intervals(rank)) / static_cast<double>(ranks_);
  return seconds;
}

void WaitTally::fill(std::vector<RankTraceSummary>& ranks) const {
  for (std::size_t r = 0; r < ranks_; ++r) {
    RankTraceSummary& rank = ranks[r];
    rank.wait_seconds = waited_[r] + total_length(merged_intervals(waiting_[r]));
    rank.caused_wait_seconds = caused_[r];
    for (std::size_t other = 0; other < ranks_; ++other)
      rank.caused_wait_seconds += total_length(merged_intervals(caused_waiting_[r * ranks_ + other]));
    rank.last_arrivals = last_arrivals_[r];
    if (last_arrivals_[r] > 0) rank.lateness_seconds = lateness_[r] / static_cast<double>(last_arrivals_[r]);
  }
}

}  // namespace commbench
