#include "time_intervals.hpp"

#include <algorithm>

namespace commbench {

std::vector<TimeInterval> merged_intervals(std::vector<TimeInterval> intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::vector<TimeInterval> merged;
  for (const TimeInterval& interval : intervals) {
    if (!merged.empty() && interval.first <= merged.back().second)
      merged.back().second = std::max(merged.back().second, interval.second);
    else
      merged.push_back(interval);
  }
  return merged;
}

void add_interval(std::vector<TimeInterval>& intervals, TimeInterval interval) {
  // The ones it overlaps at the end of the list are joined into it: a range that encloses
  // the ranges before it (a parent written after its children) takes them in.
  while (!intervals.empty() && interval.first <= intervals.back().second && interval.second >= intervals.back().first) {
    interval.first = std::min(interval.first, intervals.back().first);
    interval.second = std::max(interval.second, intervals.back().second);
    intervals.pop_back();
  }
  intervals.push_back(interval);
}

bool is_merged(const std::vector<TimeInterval>& intervals) {
  for (std::size_t i = 1; i < intervals.size(); ++i)
    if (intervals[i].first <= intervals[i - 1].second) return false;
  return true;
}

double overlap_length(const std::vector<TimeInterval>& spans, const std::vector<TimeInterval>& covered) {
  double overlap = 0;
  auto at = covered.begin();
  for (const auto& [start, end] : spans) {
    while (at != covered.end() && at->second <= start) ++at;
    for (auto next = at; next != covered.end() && next->first < end; ++next)
      overlap += std::max(0.0, std::min(end, next->second) - std::max(start, next->first));
  }
  return overlap;
}

double total_length(const std::vector<TimeInterval>& spans) {
  double total = 0;
  for (const auto& [start, end] : spans) total += end - start;
  return total;
}

}  // namespace commbench
