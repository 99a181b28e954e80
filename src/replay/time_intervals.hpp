// Time as sets of intervals: what the communication of a trace covered, less what compute
// covered at the same time. Intervals are [start, end) in the trace's microseconds. A list
// is a std::vector, or a std::deque where a trace holds millions (the compute kernels): it
// grows in chunks, never copied to a buffer twice its size.
#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <utility>
#include <vector>

namespace commbench {

using TimeInterval = std::pair<double, double>;

// Whether the intervals are sorted and apart, as merged_intervals() leaves them.
template <typename List>
bool is_merged(const List& intervals) {
  for (std::size_t i = 1; i < intervals.size(); ++i)
    if (intervals[i].first <= intervals[i - 1].second) return false;
  return true;
}

// Sorted, overlapping and touching intervals joined, in the list itself: the time they
// cover, each instant once.
template <typename List>
void merge_in_place(List& intervals) {
  if (is_merged(intervals)) return;
  std::sort(intervals.begin(), intervals.end());
  auto kept = intervals.begin();
  for (auto next = std::next(kept); next != intervals.end(); ++next) {
    if (next->first <= kept->second)
      kept->second = std::max(kept->second, next->second);
    else
      *++kept = *next;
  }
  intervals.erase(std::next(kept), intervals.end());
}

// The same, as a merged copy.
std::vector<TimeInterval> merged_intervals(std::vector<TimeInterval> intervals);

namespace interval_detail {

// How far back from the list's end an interval that comes out of order is put in its
// place: the kernels of a few streams, written as each ends, interleave by a few places.
inline constexpr std::ptrdiff_t kReorderWindow = 64;

// Joins `at` with the intervals before and after it that it overlaps or touches.
template <typename List>
void join_neighbours(List& intervals, typename List::iterator at) {
  if (at != intervals.begin() && std::prev(at)->second >= at->first) {
    std::prev(at)->second = std::max(std::prev(at)->second, at->second);
    at = std::prev(intervals.erase(at));
  }
  while (std::next(at) != intervals.end() && std::next(at)->first <= at->second) {
    at->second = std::max(at->second, std::next(at)->second);
    intervals.erase(std::next(at));
  }
}

}  // namespace interval_detail

// Adds one interval to a list kept merged while the intervals come roughly in order of
// start or of end (a trace's events do): it takes in the intervals it overlaps at the
// list's end, one that starts a little out of order goes in its place among the last
// few, else it is appended. The list is exact after merge_in_place().
template <typename List>
void add_interval(List& intervals, TimeInterval interval) {
  // The ones it overlaps at the end of the list are joined into it: a range that encloses
  // the ranges before it (a parent written after its children) takes them in.
  while (!intervals.empty() && interval.first <= intervals.back().second && interval.second >= intervals.back().first) {
    interval.first = std::min(interval.first, intervals.back().first);
    interval.second = std::max(interval.second, intervals.back().second);
    intervals.pop_back();
  }
  if (!intervals.empty() && interval.second < intervals.back().first) {
    // Before the last one: in its place when that is near the end; further back it is
    // appended, and the list is no longer merged until merge_in_place().
    const std::ptrdiff_t size = static_cast<std::ptrdiff_t>(intervals.size());
    const auto window = intervals.end() - std::min(interval_detail::kReorderWindow, size);
    const auto at = std::upper_bound(window, intervals.end(), interval);
    if (at != window || window == intervals.begin()) {
      interval_detail::join_neighbours(intervals, intervals.insert(at, interval));
      return;
    }
  }
  intervals.push_back(interval);
}

// The time within `spans` that `covered` covers too (both merged).
template <typename Spans, typename Covered = std::vector<TimeInterval>>
double overlap_length(const Spans& spans, const Covered& covered) {
  double overlap = 0;
  auto at = covered.begin();
  for (const auto& [start, end] : spans) {
    while (at != covered.end() && at->second <= start) ++at;
    for (auto next = at; next != covered.end() && next->first < end; ++next)
      overlap += std::max(0.0, std::min(end, next->second) - std::max(start, next->first));
  }
  return overlap;
}

// The time `spans` (merged) cover.
double total_length(const std::vector<TimeInterval>& spans);

}  // namespace commbench
