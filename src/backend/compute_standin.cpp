#include "commbench/backend/compute_standin.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "commbench/core/error.hpp"
#include "commbench/core/statistics.hpp"

namespace commbench {

double ComputeCalibration::worst_absolute_error_seconds() const {
  double worst = 0;
  for (const CalibrationPoint& point : points)
    worst = std::max(worst, std::abs(point.corrected_seconds - point.requested_seconds));
  return worst;
}

double ComputeCalibration::worst_relative_error() const {
  double worst = 0;
  for (const CalibrationPoint& point : points)
    if (point.requested_seconds > 0)
      worst = std::max(worst, std::abs(point.corrected_seconds - point.requested_seconds) / point.requested_seconds);
  return worst;
}

// Measures `seconds` `repeats` times: the median (what a run typically takes) and the
// smallest (the run least disturbed by anything else on the machine).
ComputeStandIn::Spread ComputeStandIn::measure_repeatedly(double seconds, int repeats) {
  std::vector<double> measured;
  for (int i = 0; i < repeats; ++i) measured.push_back(measure_uncorrected(seconds));
  const double fastest = *std::min_element(measured.begin(), measured.end());
  return Spread{median_of(std::move(measured)), fastest};
}

ComputeCalibration ComputeStandIn::calibrate(std::span<const double> durations, int repeats) {
  if (durations.empty() || repeats < 1) throw UsageError("compute calibration needs durations and repeats >= 1");
  ComputeCalibration calibration;
  // A warm-up run: the first launch or thread wake-up pays one-time costs.
  (void)measure_uncorrected(durations.front());
  // The excess is a fixed cost (start, observe the end), not a rate error: both clocks
  // count real nanoseconds. Noise (preemption, other jobs) only ever adds time, so the
  // smallest excess seen is the best estimate of the fixed part.
  double smallest_excess = std::numeric_limits<double>::infinity();
  for (const double requested : durations) {
    const Spread raw = measure_repeatedly(requested, repeats);
    calibration.points.push_back(CalibrationPoint{requested, raw.median, 0, 0});
    smallest_excess = std::min(smallest_excess, raw.fastest - requested);
  }
  offset_seconds_ = std::max(0.0, smallest_excess);
  calibration.offset_seconds = offset_seconds_;
  for (CalibrationPoint& point : calibration.points) {
    const Spread corrected = measure_repeatedly(corrected_request(point.requested_seconds), repeats);
    point.corrected_seconds = corrected.median;
    point.corrected_fastest_seconds = corrected.fastest;
  }
  return calibration;
}

double ComputeStandIn::corrected_request(double seconds) const { return std::max(0.0, seconds - offset_seconds_); }

}  // namespace commbench
