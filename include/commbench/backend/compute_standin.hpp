// Stands for the compute of a training step that communication overlaps: it keeps a
// processor busy for a requested time (a busy-wait on a host thread, a spin kernel on a
// GPU) without touching memory, so overlap is measured, not modelled. Calibrated: the
// fixed cost of starting and observing a task is measured and subtracted from requests.
#pragma once

#include <span>
#include <string>
#include <vector>

namespace commbench {

struct CalibrationPoint {
  double requested_seconds = 0;
  double raw_seconds = 0;        // median measured before correction
  double corrected_seconds = 0;  // median measured with the correction applied
  // The fastest corrected run: what the stand-in does when nothing else wants the processor.
  double corrected_fastest_seconds = 0;
};

struct ComputeCalibration {
  double offset_seconds = 0;  // subtracted from every request
  std::vector<CalibrationPoint> points;
  double worst_absolute_error_seconds() const;  // |corrected - requested|, largest over points
  double worst_relative_error() const;          // the same divided by requested
};

class ComputeStandIn {
 public:
  virtual ~ComputeStandIn() = default;
  ComputeStandIn() = default;
  ComputeStandIn(const ComputeStandIn&) = delete;
  ComputeStandIn& operator=(const ComputeStandIn&) = delete;

  // What the stand-in occupies while it runs, for headers and docs ("one host thread",
  // "132 blocks x 128 threads: one block on each of 132 SMs").
  virtual std::string occupies() const = 0;
  // Busy for `seconds` exactly as requested (no correction), waiting for the end; returns
  // the duration measured the way streams observe it.
  virtual double measure_uncorrected(double seconds) = 0;

  // Measures each duration `repeats` times, sets the offset to the smallest excess over
  // the request seen, and measures again with it (points report medians). Streams apply
  // the offset from then on.
  ComputeCalibration calibrate(std::span<const double> durations, int repeats);
  // What to ask the busy loop for so that it takes `seconds` as observed.
  double corrected_request(double seconds) const;
  double offset_seconds() const { return offset_seconds_; }

 private:
  struct Spread {
    double median = 0;
    double fastest = 0;
  };
  Spread measure_repeatedly(double seconds, int repeats);
  double offset_seconds_ = 0;
};

}  // namespace commbench
