// The one measurement loop: warm-up, batch sizing, timed batches until the stopping
// criterion is satisfied on every rank, then the cross-rank combination. It runs any
// Workload; every decision is collective, so ranks never diverge, and every step that
// waits for other ranks runs under the watchdog.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "commbench/backend/bootstrap.hpp"
#include "commbench/core/reading_budget.hpp"
#include "commbench/core/statistics.hpp"
#include "commbench/core/stopping_rule.hpp"
#include "commbench/runner/watchdog.hpp"
#include "commbench/runner/workload.hpp"

namespace commbench {

struct MeasurementSettings {
  std::uint64_t warmup_iterations = 1;
  bool check = false;
  // Batches are sized to last about this long, so timer and agreement overhead stay
  // small for small messages while large messages still get many samples. Short
  // batches reach a given noise of the mean sooner where the noise comes in bursts
  // (scheduling): 1 ms needed a quarter of the time of 5 ms (docs/performance.md).
  double target_batch_seconds = 1e-3;
  // Also gather every rank's own mean (Measurement::rank_mean_seconds): a round of
  // independent pairs is judged per pair, not by its slowest rank. One more all-gather.
  bool gather_rank_means = false;
  // A time budget (bench-validate's readings): checked after every warm-up chunk, the
  // calibration and every batch, on the slowest rank's clock and the fastest taking part
  // rank's pace; once spent, the measurement ends there, cut short. None: no budget.
  std::optional<ReadingBudget> budget;
};

// What every rank agrees a measurement was. Times are seconds per iteration.
struct Measurement {
  std::uint64_t iterations = 0;  // timed iterations per rank
  std::uint64_t samples = 0;     // timed batches per rank
  double slowest_seconds = 0;    // max over ranks of each rank's mean
  double fastest_seconds = 0;    // min over ranks of each rank's mean
  double mean_seconds = 0;       // mean over ranks of each rank's mean
  double p50_seconds = 0;        // max over ranks of the per-rank median batch sample
  double p99_seconds = 0;        // max over ranks of the per-rank 99th percentile
  // Max over ranks of the relative standard error of the per-rank mean; empty when a
  // rank took a single sample.
  std::optional<double> noise;
  int slowest_rank = 0;
  std::string slowest_host;
  StopReason stop_reason = StopReason::keep_going;
  std::optional<std::uint64_t> wrong;  // wrong elements over all ranks; empty unless checked
  // "WORKLOAD: N wrong elements, first on rank R (host H)" when the check failed.
  std::optional<std::string> check_failure;
  // Each rank's mean seconds per iteration, by rank; empty unless gather_rank_means.
  std::vector<double> rank_mean_seconds;
  // Whether the budget ran out before the fixed count was reached: the times above are
  // then over every iteration each rank moved, warm-up and calibration included.
  bool cut_short = false;
  std::uint64_t moved_iterations = 0;  // warm-up, calibration and timed, per rank
  double budget_seconds = 0;           // the budget it was held to (0: none)
  double elapsed_seconds = 0;          // from the first warm-up iteration to the last check (with a budget)
};

// --profile-range's capture range: called with true just before the first timed batch and
// with false after the last (also when the measurement is left by an exception).
using CaptureSwitch = std::function<void(bool start)>;

class MeasurementLoop {
 public:
  // `watchdog` may be null (unit tests); the criterion must outlive the loop.
  MeasurementLoop(Bootstrap& group, const StoppingCriterion& criterion, MeasurementSettings settings,
                  Watchdog* watchdog = nullptr);

  // prepare, optional check, warm-up, calibration, timed batches, combination, release,
  // each in a profiler range (core/profile_range.hpp) inside one named as the workload.
  // Throws Interrupted once every rank knows of SIGINT/SIGTERM.
  Measurement measure(Workload& workload, const CaptureSwitch& capture = {});
  // Iterations of the timed batches measure() finished, the same on every rank: what an
  // interrupted measurement had timed when it threw.
  std::uint64_t timed_iterations() const { return timed_iterations_; }

 private:
  // What this rank's timed batches leave for the combination across ranks.
  struct TimedBatches {
    std::vector<double> samples;  // seconds per iteration, one per batch
    TimingProgress progress;
    double busy_seconds = 0;  // summed over the batches, without the agreements between them
    StopReason stop_reason = StopReason::keep_going;
  };

  // measure()'s phases, in the order it runs them.
  void prepare(Workload& workload);
  std::uint64_t checked_wrong_elements(Workload& workload, std::optional<std::string>& failure);
  std::uint64_t calibrated_batch(Workload& workload);
  // Counts `iterations` that took this rank `seconds` (warm-up, calibration, timed).
  void count_moved(double seconds, std::uint64_t iterations);
  // With a budget, agrees whether it is spent (collective; sets cut_short_). False
  // without a budget.
  bool budget_spent(const Workload& workload);
  TimedBatches timed_batches(Workload& workload, const CaptureSwitch& capture, std::uint64_t preferred_batch);
  void combine_across_ranks(const Workload& workload, const TimedBatches& timing, const SampleSummary& local,
                            double local_mean, Measurement& result);

  std::uint64_t batch_for(double seconds_per_iteration) const;
  double timed(Workload& workload, std::uint64_t iterations, const char* phase);
  // The warm-up iterations, in growing chunks with an agreement on signals between them,
  // so that a Ctrl-C stops a long warm-up as it stops the timed batches.
  void warm_up(Workload& workload);
  std::function<void(bool)> guarded_capture(const Workload& workload, const CaptureSwitch& capture);
  // The stopping rule's agreement after each batch: the reason every rank stops for, or
  // none while some rank wants more samples. Throws Interrupted once any rank was signalled.
  std::optional<StopReason> agreed_stop(const Workload& workload, StopReason local_reason);
  [[noreturn]] void throw_interrupted(const Workload& workload);
  // Runs one agreement step between ranks (barrier, allreduce) under the watchdog: a
  // rank that never arrives stalls these, not the operations.
  template <typename Step>
  auto agreed(const Workload& workload, const char* what, Step&& step) {
    if (watchdog_ == nullptr) return step();
    auto guard = watchdog_->guard(workload.describe() + " (" + what + ")");
    return step();
  }

  Bootstrap& group_;
  const StoppingCriterion& criterion_;
  MeasurementSettings settings_;
  Watchdog* watchdog_;
  std::uint64_t timed_iterations_ = 0;
  // What the budget is held against, from the first warm-up iteration on.
  std::chrono::steady_clock::time_point reading_started_;
  std::uint64_t moved_iterations_ = 0;
  double moved_seconds_ = 0;
  double budget_limit_ = 0;
  double budget_elapsed_ = 0;
  bool cut_short_ = false;
};

}  // namespace commbench
