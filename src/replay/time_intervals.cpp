#include "time_intervals.hpp"

namespace commbench {

std::vector<TimeInterval> merged_intervals(std::vector<TimeInterval> intervals) {
  merge_in_place(intervals);
  return intervals;
}

double total_length(const std::vector<TimeInterval>& spans) {
  double total = 0;
  for (const auto& [start, end] : spans) total += end - start;
  return total;
}

}  // namespace commbench
