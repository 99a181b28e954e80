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
  SampleSummary summary;
  summary.count = samples.size();
  if (samples.empty()) return summary;
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  summary.min = sorted.front();
  summary.max = sorted.back();
  double sum = 0;
  for (double x : sorted) sum += x;
  summary.mean = sum / static_cast<double>(summary.count);
  if (summary.count > 1) {
    double squares = 0;
    for (double x : sorted) squares += (x - summary.mean) * (x - summary.mean);
    summary.stddev = std::sqrt(squares / static_cast<double>(summary.count - 1));
    summary.relative_stddev = summary.mean > 0 ? summary.stddev / summary.mean : 0;
    summary.relative_error = summary.relative_stddev / std::sqrt(static_cast<double>(summary.count));
  }
  summary.p50 = percentile_of_sorted(sorted, 0.50);
  summary.p99 = percentile_of_sorted(sorted, 0.99);
  return summary;
}

double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return percentile_of_sorted(values, 0.5);
}

}  // namespace commbench
