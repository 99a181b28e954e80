// Time as sets of intervals: what the communication of a trace covered, less what compute
// covered at the same time. Intervals are [start, end) in the trace's microseconds.
#pragma once

#include <utility>
#include <vector>

namespace commbench {

using TimeInterval = std::pair<double, double>;

// Sorted, overlapping and touching intervals joined: the time they cover, each instant once.
std::vector<TimeInterval> merged_intervals(std::vector<TimeInterval> intervals);

// Adds one interval to a list kept merged while the intervals come roughly in order of
// start or of end (a trace's events do): it takes in the intervals it overlaps at the
// list's end, else it is appended. The list is exact after merged_intervals().
void add_interval(std::vector<TimeInterval>& intervals, TimeInterval interval);

// Whether the intervals are sorted and apart, as merged_intervals() leaves them.
bool is_merged(const std::vector<TimeInterval>& intervals);

// The time within `spans` that `covered` covers too (both merged).
double overlap_length(const std::vector<TimeInterval>& spans, const std::vector<TimeInterval>& covered);
// The time `spans` (merged) cover.
double total_length(const std::vector<TimeInterval>& spans);

}  // namespace commbench
