#include "commbench/runner/measurement.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "commbench/backend/collective_try.hpp"
#include "commbench/backend/typed_exchange.hpp"
#include "commbench/core/profile_range.hpp"
#include "commbench/core/statistics.hpp"
#include "commbench/runner/interruption.hpp"

namespace commbench {
namespace {

// Welford's running variance: the stopping criterion needs the relative standard error
// of the mean after every batch without re-reading all samples.
class RunningNoise {
 public:
  void add(double sample) {
    ++count_;
    const double delta = sample - mean_;
    mean_ += delta / static_cast<double>(count_);
    sum_of_squares_ += delta * (sample - mean_);
  }
  double relative_error() const {
    if (count_ < 2) return 1.0;  // unknown: never "quiet" on one sample
    if (mean_ <= 0) return 0.0;
    return std::sqrt(sum_of_squares_ / static_cast<double>(count_ - 1) / static_cast<double>(count_)) / mean_;
  }

 private:
  std::uint64_t count_ = 0;
  double mean_ = 0;
  double sum_of_squares_ = 0;
};

constexpr std::uint64_t kMaxBatch = 1u << 20;

// One round trip of the stop agreement carries three answers as bits: "I want more
// samples", "I was signalled", and why this rank would stop.
constexpr int kWantsMore = 1;
constexpr int kSignalled = 2;
constexpr int kReasonShift = 2;

int reason_bit(StopReason reason) {
  return reason == StopReason::keep_going ? 0 : 1 << (kReasonShift + static_cast<int>(reason) - 1);
}

// Ranks may stop for different reasons (one quiet, another out of time): the row reports
// the one that most qualifies its time, the highest in StopReason's order.
StopReason agreed_reason(int bits) {
  for (StopReason reason : {StopReason::time_limit, StopReason::noise_target, StopReason::fixed_count})
    if ((bits & reason_bit(reason)) != 0) return reason;
  return StopReason::keep_going;
}

// Holds the profiler's capture range open from construction to close(); a measurement
// left by an exception closes it on the way out, and an error then would only hide the
// one being thrown, so it is dropped there. Inside it, a range named `case_name` +
// " (capture range)": the case's own range begins before the capture opens, and a
// capture keeps only the ranges opened inside it, so without this one a captured
// profile holds batches that name no collective (compare
// results/gpu/h100-80gb-hbm3/2026-11-26-65b7784/nsys/capture-range-nvtx_sum.csv with
// results/gpu/h100-80gb-hbm3/2026-11-26-3e21210/nsys-nvtx_sum.csv).
class CaptureScope {
 public:
  CaptureScope(std::function<void(bool)> capture, const std::function<std::string()>& case_name)
      : capture_(std::move(capture)) {
    if (!capture_) return;
    capture_(true);
    named_.emplace([&] { return case_name() + " (capture range)"; });
  }
  void close() {
    named_.reset();
    if (capture_) std::exchange(capture_, nullptr)(false);
  }
  ~CaptureScope() {
    try {
      close();
    } catch (...) {  // NOLINT(bugprone-empty-catch): see above
    }
  }
  CaptureScope(const CaptureScope&) = delete;
  CaptureScope& operator=(const CaptureScope&) = delete;

 private:
  std::function<void(bool)> capture_;
  std::optional<ProfileRange> named_;
};

// The step's guard, or none without a watchdog.
std::optional<Watchdog::Guard> guard_of(Watchdog* watchdog, const std::string& step) {
  if (watchdog == nullptr) return std::nullopt;
  return watchdog->guard(step);
}

}  // namespace

MeasurementLoop::MeasurementLoop(Bootstrap& group, const StoppingCriterion& criterion, MeasurementSettings settings,
                                 Watchdog* watchdog)
    : group_(group), criterion_(criterion), settings_(settings), watchdog_(watchdog) {}

std::uint64_t MeasurementLoop::batch_for(double seconds_per_iteration) const {
  // The fewest iterations that last the target, so that a batch's own cost keeps below its
  // share (a ratio a rounding error above a whole number is that number).
  const double iterations = settings_.target_batch_seconds / std::max(seconds_per_iteration, 1e-9);
  return static_cast<std::uint64_t>(std::clamp(std::ceil(iterations - 1e-9), 1.0, static_cast<double>(kMaxBatch)));
}

double MeasurementLoop::timed(Workload& workload, std::uint64_t iterations, const char* phase) {
  const auto guard = guard_of(watchdog_, fmt::format("{} ({}, {} iterations)", workload.describe(), phase, iterations));
  const ProfileRange range(
      [&] { return fmt::format("{} ({} iteration{})", phase, iterations, iterations == 1 ? "" : "s"); });
  return workload.time(iterations);
}

void MeasurementLoop::warm_up(Workload& workload) {
  // A default warm-up (2) is one chunk with no agreement. A longer one goes on in chunks
  // of about kChunkSeconds, sized by the slowest rank's iterations, with an agreement on
  // signals between them: a Ctrl-C stops it soon, before mpirun's SIGKILL follows its
  // SIGTERM (a second later by default).
  constexpr std::uint64_t kFirstChunk = 2;
  constexpr std::uint64_t kLargestChunk = std::uint64_t{1} << 16;
  constexpr double kChunkSeconds = 0.1;
  const std::uint64_t total = settings_.warmup_iterations;
  const auto guard = guard_of(watchdog_, fmt::format("{} (warm-up, {} iterations)", workload.describe(), total));
  const ProfileRange range([&] { return fmt::format("warm-up ({} iteration{})", total, total == 1 ? "" : "s"); });
  std::uint64_t done = 0;
  // A budget is checked after every chunk, the first one iteration long: one iteration of
  // a link at a hundredth of its rate is what the budget can be overrun by.
  std::uint64_t chunk = settings_.budget ? 1 : kFirstChunk;
  while (done < total) {
    const std::uint64_t iterations = std::min(chunk, total - done);
    const double seconds = workload.time(iterations);
    done += iterations;
    count_moved(seconds, iterations);
    if (budget_spent(workload)) return;
    if (done == total) break;
    const double local = pending_interruption() != 0 ? std::numeric_limits<double>::infinity()
                                                     : seconds / static_cast<double>(iterations);
    const double slowest = agreed(workload, "warm-up agreement", [&] { return group_.max(local); });
    if (std::isinf(slowest)) throw_interrupted(workload);
    const double fitting = slowest > 0 ? kChunkSeconds / slowest : static_cast<double>(kLargestChunk);
    chunk = static_cast<std::uint64_t>(std::clamp(fitting, 1.0, static_cast<double>(kLargestChunk)));
  }
}

std::uint64_t MeasurementLoop::checked_wrong_elements(Workload& workload, std::optional<std::string>& failure) {
  std::uint64_t local_wrong = 0;
  {
    const auto guard = guard_of(watchdog_, workload.describe() + " (check)");
    const ProfileRange range("check");
    local_wrong = workload.check();
  }
  std::uint64_t total_wrong = 0;
  int first_bad_rank = -1;
  agreed(workload, "check agreement", [&] {
    total_wrong = group_.sum(local_wrong);
    first_bad_rank = group_.first_rank_where(local_wrong > 0);
  });
  if (total_wrong > 0) {
    failure = fmt::format("{}: {} wrong elements, first on rank {} (host {})", workload.describe(), total_wrong,
                          first_bad_rank, group_.hostnames()[static_cast<std::size_t>(first_bad_rank)]);
  }
  return total_wrong;
}

void MeasurementLoop::throw_interrupted(const Workload& workload) {
  // Ranks may have seen different signals (or none, when only some were signalled): agree
  // on one so every rank exits with the same code.
  const int signal_number = signal_of_agreement_key(
      agreed(workload, "interruption agreement", [&] { return group_.max(interruption_agreement_key()); }));
  throw Interrupted(signal_number);
}

Measurement MeasurementLoop::measure(Workload& workload, const CaptureSwitch& capture) {
  const ProfileRange case_range([&] { return workload.describe(); });
  prepare(workload);
  Measurement result;
  timed_iterations_ = 0;
  if (settings_.check) result.wrong = checked_wrong_elements(workload, result.check_failure);

  moved_iterations_ = 0;
  moved_seconds_ = 0;
  budget_limit_ = 0;
  budget_elapsed_ = 0;
  cut_short_ = false;
  reading_started_ = std::chrono::steady_clock::now();
  if (settings_.warmup_iterations > 0) warm_up(workload);

  TimedBatches timing;
  if (!cut_short_) {
    const std::uint64_t preferred_batch = calibrated_batch(workload);
    if (!cut_short_) timing = timed_batches(workload, capture, preferred_batch);
  }
  result.stop_reason = cut_short_ ? StopReason::time_limit : timing.stop_reason;
  result.cut_short = cut_short_;
  result.moved_iterations = moved_iterations_;
  result.budget_seconds = settings_.budget ? budget_limit_ : 0;
  result.elapsed_seconds = budget_elapsed_;

  const SampleSummary local = summarize(timing.samples);
  // Cut short, a rank's pace is what it moved in all it ran: the timed batches may be
  // none, and a warm-up iteration of a slow link is as slow as a timed one.
  const double local_mean =
      cut_short_ ? moved_seconds_ / static_cast<double>(std::max<std::uint64_t>(moved_iterations_, 1))
                 : timing.busy_seconds / static_cast<double>(std::max<std::uint64_t>(timing.progress.iterations, 1));
  // Open through release(): the workload's release is profiled as part of this phase.
  const ProfileRange combining("combining results");
  combine_across_ranks(workload, timing, local, local_mean, result);
  workload.release();
  return result;
}

void MeasurementLoop::prepare(Workload& workload) {
  const auto guard = guard_of(watchdog_, workload.describe() + " (preparing)");
  const ProfileRange range("prepare");
  // A case a backend refuses fails on every rank alike, an allocation on some only:
  // either way one message, and no rank left waiting in the next collective.
  collective_try(group_, [&] { workload.prepare(); });
}

// Size batches from one operation's time on the slowest rank; all ranks agree on it.
// The first timed batch re-sizes them once more (timed_batches), since a single cold
// operation often overstates the steady-state time.
std::uint64_t MeasurementLoop::calibrated_batch(Workload& workload) {
  agreed(workload, "barrier before calibration", [&] { group_.barrier(); });
  const double one_op = timed(workload, 1, "calibration");
  count_moved(one_op, 1);
  if (budget_spent(workload)) return 0;
  return batch_for(agreed(workload, "calibration agreement", [&] { return group_.max(one_op); }));
}

void MeasurementLoop::count_moved(double seconds, std::uint64_t iterations) {
  moved_iterations_ += iterations;
  moved_seconds_ += seconds;
}

bool MeasurementLoop::budget_spent(const Workload& workload) {
  if (!settings_.budget) return false;
  const ReadingBudget& budget = *settings_.budget;
  const double own_elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - reading_started_).count();
  const double own_pace = budget.takes_part && moved_iterations_ > 0
                              ? moved_seconds_ / static_cast<double>(moved_iterations_)
                              : std::numeric_limits<double>::infinity();
  // Both figures agreed, so every rank takes the same decision after the same iteration.
  const auto [elapsed, fastest] = agreed(workload, "budget agreement", [&] {
    const double slowest_clock = group_.max(own_elapsed);
    return std::pair{slowest_clock, group_.min(own_pace)};
  });
  budget_elapsed_ = elapsed;
  budget_limit_ = reading_budget_seconds(budget, fastest);
  cut_short_ = elapsed >= budget_limit_;
  return cut_short_;
}

// Opening and closing the capture range wait on the profiler: under the watchdog too.
// None without a capture switch. The switch refers to `workload` and `capture`, both of
// which outlive the measurement.
std::function<void(bool)> MeasurementLoop::guarded_capture(const Workload& workload, const CaptureSwitch& capture) {
  std::function<void(bool)> switch_capture;
  if (capture)
    switch_capture = [this, &workload, &capture](bool start) {
      const auto guard = guard_of(watchdog_, workload.describe() + (start ? " (opening the profiler's capture range)"
                                                                          : " (closing the profiler's capture range)"));
      capture(start);
    };
  return switch_capture;
}

MeasurementLoop::TimedBatches MeasurementLoop::timed_batches(Workload& workload, const CaptureSwitch& capture,
                                                             std::uint64_t preferred_batch) {
  TimedBatches timing;
  TimingProgress& progress = timing.progress;
  RunningNoise noise;
  const auto started = std::chrono::steady_clock::now();
  agreed(workload, "barrier before timing", [&] { group_.barrier(); });
  // Ranges nest as a stack: the capture's range outside "timed batches", closed after it.
  CaptureScope capture_scope(guarded_capture(workload, capture), [&] { return workload.describe(); });
  std::optional<ProfileRange> timed_range(std::in_place, "timed batches");
  for (;;) {
    const std::uint64_t batch = criterion_.next_batch(progress, preferred_batch);
    if (batch == 0) break;
    const double seconds = timed(workload, batch, "timed batch");
    const double per_iteration = seconds / static_cast<double>(batch);
    timing.samples.push_back(per_iteration);
    noise.add(per_iteration);
    timing.busy_seconds += seconds;
    count_moved(seconds, batch);
    progress.samples += 1;
    progress.iterations += batch;
    timed_iterations_ = progress.iterations;
    progress.relative_noise = noise.relative_error();
    progress.elapsed_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (progress.samples == 1 && criterion_.resizes_batches()) {
      preferred_batch = batch_for(agreed(workload, "batch re-sizing", [&] { return group_.max(per_iteration); }));
    }
    if (const std::optional<StopReason> stop = agreed_stop(workload, criterion_.evaluate(progress))) {
      timing.stop_reason = *stop;
      break;
    }
    if (budget_spent(workload)) break;
  }
  // A fixed count can end without a final agreement (its last batch size is 0 only when
  // no iteration is left, which every rank knows alike).
  if (timing.stop_reason == StopReason::keep_going) timing.stop_reason = criterion_.evaluate(progress);
  timed_range.reset();
  capture_scope.close();
  return timing;
}

std::optional<StopReason> MeasurementLoop::agreed_stop(const Workload& workload, StopReason local_reason) {
  const int local_bits = (local_reason == StopReason::keep_going ? kWantsMore : reason_bit(local_reason)) |
                         (pending_interruption() != 0 ? kSignalled : 0);
  const int bits = agreed(workload, "stop agreement", [&] { return group_.bitwise_or(local_bits); });
  if ((bits & kSignalled) != 0) throw_interrupted(workload);
  if ((bits & kWantsMore) == 0) return agreed_reason(bits);
  return std::nullopt;
}

void MeasurementLoop::combine_across_ranks(const Workload& workload, const TimedBatches& timing,
                                           const SampleSummary& local, double local_mean, Measurement& result) {
  const TimingProgress& progress = timing.progress;
  agreed(workload, "combining results", [&] {
    const RankValue slowest = group_.max_with_rank(local_mean);
    result.iterations = progress.iterations;
    result.samples = progress.samples;
    result.slowest_seconds = slowest.value;
    result.slowest_rank = slowest.rank;
    result.slowest_host = group_.hostnames()[static_cast<std::size_t>(slowest.rank)];
    result.fastest_seconds = group_.min(local_mean);
    result.mean_seconds = group_.sum(local_mean) / static_cast<double>(group_.size());
    result.p50_seconds = group_.max(local.p50);
    result.p99_seconds = group_.max(local.p99);
    const std::uint64_t fewest_samples = static_cast<std::uint64_t>(group_.min(static_cast<double>(local.count)));
    const double worst_error = group_.max(local.relative_error);
    if (fewest_samples >= 2) result.noise = worst_error;
    if (settings_.gather_rank_means) result.rank_mean_seconds = all_gather_as(group_, local_mean);
  });
}

}  // namespace commbench
