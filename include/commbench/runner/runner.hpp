// bench-collectives' view of the measurement loop: one OpCase at a time becomes a
// CollectiveWorkload, measured by MeasurementLoop, and the agreed Measurement becomes a
// ResultRow with algbw and busbw. Every decision is collective, so ranks never diverge.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "commbench/backend/backend.hpp"
#include "commbench/core/result_row.hpp"
#include "commbench/core/stopping_rule.hpp"
#include "commbench/runner/collective_buffers.hpp"
#include "commbench/runner/measurement.hpp"
#include "commbench/runner/watchdog.hpp"

namespace commbench {

struct RunnerSettings {
  StoppingCriteria stopping;
  std::uint64_t warmup_iterations = 1;
  bool check = false;
  double target_batch_seconds = 1e-3;  // see MeasurementSettings
  int corrupt_rank = -1;               // testing only: damage one output element on this rank before checking
  // --profile-range: open the profiler's capture range around the timed batches of every
  // case whose name (CollectiveWorkload::describe) contains this text; "" names them all.
  std::optional<std::string> profile_range;
};

// The measured part of a row: iterations, times, noise, slowest rank, stop reason, wrong.
void fill_measured_fields(const Measurement& measurement, ResultRow& row);
// The row's nccl_* fields from what the backend reported for the case (nothing: empty).
void fill_library_choices(const NcclChoiceSummary& choices, ResultRow& row);

class Runner {
 public:
  Runner(Backend& backend, RunnerSettings settings, Watchdog* watchdog = nullptr);

  // Allocates the largest buffers any collective of `plan` needs (collective, under the
  // watchdog; UsageError on every rank when the memory cannot be had), so an impossible
  // size fails before the sweep.
  void prepare(std::span<const OpCase> plan);
  ResultRow run(const OpCase& c);

  // One message per case whose check found wrong elements, naming op, size and rank.
  const std::vector<std::string>& check_failures() const { return check_failures_; }

 private:
  Backend& backend_;
  RunnerSettings settings_;
  Watchdog* watchdog_;
  std::unique_ptr<StoppingCriterion> criterion_;
  MeasurementLoop loop_;
  CollectiveBuffers buffers_;
  std::vector<std::string> check_failures_;
};

}  // namespace commbench
