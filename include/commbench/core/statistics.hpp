// Summary statistics of timing samples (seconds per iteration).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace commbench {

struct SampleSummary {
  std::size_t count = 0;
  double mean = 0;
  double stddev = 0;  // sample standard deviation (n - 1)
  double min = 0;
  double max = 0;
  double p50 = 0;
  double p99 = 0;
  double relative_stddev = 0;  // stddev / mean: spread of single samples (nvbench's "noise")
  // stddev / sqrt(count) / mean: the relative uncertainty of `mean` itself. This is what
  // commbench reports as noise and what the stopping rule drives down, because the
  // reported time is a mean. 0 for fewer than two samples.
  double relative_error = 0;
};

// Percentile by linear interpolation between closest ranks (the common "type 7"
// definition); `sorted` must be ascending and non-empty, q in [0, 1].
double percentile_of_sorted(std::span<const double> sorted, double q);

SampleSummary summarize(std::span<const double> samples);

// The median (the mean of the middle two for an even count); 0 for no values.
double median_of(std::vector<double> values);

}  // namespace commbench
