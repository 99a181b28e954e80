#include "commbench/core/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace commbench {

double percentile_of_sorted(std::span<const double> sorted, double q) {
  if (sorted.empty()) return 0;
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto lower = static_cast<std::size_t>(std::floor(position));
  const std::size_t upper = std::min(lower + 1, sorted.size() - 1);
  const double fraction = position - static_cast<double>(lower);
  return sorted[lower] + (sorted[upper] - sorted[lower]) * fraction;
}

SampleSummary summarize(std::span<const double> samples) {
  SampleSummary s;
  s.count = samples.size();
  if (samples.empty()) return s;
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  s.min = sorted.front();
  s.max = sorted.back();
  double sum = 0;
  for (double x : sorted) sum += x;
  s.mean = sum / static_cast<double>(s.count);
  if (s.count > 1) {
    double squares = 0;
    for (double x : sorted) squares += (x - s.mean) * (x - s.mean);
    s.stddev = std::sqrt(squares / static_cast<double>(s.count - 1));
    s.relative_stddev = s.mean > 0 ? s.stddev / s.mean : 0;
    s.relative_error = s.relative_stddev / std::sqrt(static_cast<double>(s.count));
  }
  s.p50 = percentile_of_sorted(sorted, 0.50);
  s.p99 = percentile_of_sorted(sorted, 0.99);
  return s;
}

}  // namespace commbench
