#include "commbench/runner/runner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>

#include "commbench/core/error.hpp"
#include "commbench/core/statistics.hpp"
#include "commbench/runner/interruption.hpp"

namespace commbench {
namespace {

// Welford's running variance: the stopping rule needs the relative standard error of
// the mean after every batch without re-reading all samples.
class RunningNoise {
 public:
  void add(double x) {
    ++n_;
    const double delta = x - mean_;
    mean_ += delta / static_cast<double>(n_);
    m2_ += delta * (x - mean_);
  }
  double relative_error() const {
    if (n_ < 2) return 1.0;  // unknown: never "quiet" on one sample
    if (mean_ <= 0) return 0.0;
    return std::sqrt(m2_ / static_cast<double>(n_ - 1) / static_cast<double>(n_)) / mean_;
  }

 private:
  std::uint64_t n_ = 0;
  double mean_ = 0;
  double m2_ = 0;
};

constexpr std::uint64_t kMaxBatch = 1u << 20;

}  // namespace

BufferRequirement buffers_needed(std::span<const OpCase> plan) {
  BufferRequirement need;
  for (const OpCase& c : plan) {
    const BufferRequirement op_need = buffers_needed(plan, c.op);
    if (op_need.total() > need.total()) need = op_need;
  }
  return need;
}

BufferRequirement buffers_needed(std::span<const OpCase> plan, Collective op) {
  BufferRequirement need;
  for (const OpCase& c : plan) {
    if (c.op != op) continue;
    need.send_bytes = std::max(need.send_bytes, c.send_bytes());
    const std::uint64_t recv =
        c.placement == Placement::in_place ? std::max(c.send_bytes(), c.recv_bytes()) : c.recv_bytes();
    need.recv_bytes = std::max(need.recv_bytes, recv);
  }
  return need;
}

Runner::Runner(Backend& backend, RunnerSettings settings, Watchdog* watchdog)
    : backend_(backend), settings_(settings), watchdog_(watchdog) {}

void Runner::prepare(std::span<const OpCase> plan) {
  per_op_.clear();
  for (const OpCase& c : plan) {
    bool known = false;
    for (const auto& entry : per_op_) known = known || entry.first == c.op;
    if (!known) per_op_.emplace_back(c.op, buffers_needed(plan, c.op));
  }
  held_ = buffers_needed(plan);
  buffers_ = backend_.allocate(held_.send_bytes, held_.recv_bytes);
}

void Runner::use_buffers_for(Collective op) {
  BufferRequirement need;
  for (const auto& entry : per_op_)
    if (entry.first == op) need = entry.second;
  if (need == held_) return;
  buffers_.reset();  // free first: holding both would double the peak
  buffers_ = backend_.allocate(need.send_bytes, need.recv_bytes);
  held_ = need;
}

std::uint64_t Runner::batch_for(double seconds_per_iteration) const {
  return static_cast<std::uint64_t>(std::clamp(settings_.target_batch_seconds / std::max(seconds_per_iteration, 1e-9),
                                               1.0, static_cast<double>(kMaxBatch)));
}

double Runner::timed(const OpCase& c, std::uint64_t iterations, const char* phase) {
  if (watchdog_ == nullptr) return backend_.time_batch(c, *buffers_, iterations);
  auto guard = watchdog_->guard(describe(c) + " (" + phase + ", " + std::to_string(iterations) + " iterations)");
  return backend_.time_batch(c, *buffers_, iterations);
}

std::uint64_t Runner::checked_wrong_elements(const OpCase& c) {
  Bootstrap& group = backend_.group();
  backend_.fill_inputs(c, *buffers_);
  {
    auto guard = watchdog_ ? std::optional<Watchdog::Guard>(watchdog_->guard(describe(c) + " (check)")) : std::nullopt;
    backend_.run_single(c, *buffers_);
  }
  if (settings_.corrupt_rank == group.rank()) backend_.corrupt_output(c, *buffers_);
  const std::uint64_t local_wrong = backend_.count_wrong(c, *buffers_);
  std::uint64_t total_wrong = 0;
  int first_bad_rank = -1;
  agreed(c, "check agreement", [&] {
    total_wrong = group.sum(local_wrong);
    first_bad_rank = group.first_rank_where(local_wrong > 0);
  });
  if (total_wrong > 0) {
    check_failures_.push_back(describe(c) + ": " + std::to_string(total_wrong) + " wrong elements, first on rank " +
                              std::to_string(first_bad_rank) + " (host " +
                              group.hostnames()[static_cast<std::size_t>(first_bad_rank)] + ")");
  }
  return total_wrong;
}

void Runner::throw_interrupted(const OpCase& c) {
  // Ranks may have seen different signals (or none, when only some were signalled): agree
  // on one so every rank exits with the same code.
  const int signal_number = agreed(c, "interruption agreement", [&] { return backend_.group().max(pending_interruption()); });
  throw Interrupted(signal_number);
}

ResultRow Runner::run(const OpCase& c) {
  if (!buffers_) throw BackendError("Runner::run called before prepare()");
  use_buffers_for(c.op);
  Bootstrap& group = backend_.group();
  const StoppingRule rule(settings_.stopping);

  ResultRow row;
  row.backend = backend_.name();
  row.op_case = c;
  row.ranks = backend_.ranks();
  row.nodes = group.node_count();
  if (settings_.check) row.wrong = checked_wrong_elements(c);

  if (settings_.warmup_iterations > 0) timed(c, settings_.warmup_iterations, "warm-up");

  // Size batches from one operation's time on the slowest rank; all ranks agree on it.
  // The first timed batch re-sizes them once more, since a single cold operation often
  // overstates the steady-state time.
  agreed(c, "barrier before calibration", [&] { group.barrier(); });
  const double one_op = timed(c, 1, "calibration");
  std::uint64_t preferred_batch = batch_for(agreed(c, "calibration agreement", [&] { return group.max(one_op); }));

  std::vector<double> samples;
  RunningNoise noise;
  TimingProgress progress;
  double busy_seconds = 0;
  const auto started = std::chrono::steady_clock::now();
  agreed(c, "barrier before timing", [&] { group.barrier(); });
  for (;;) {
    const std::uint64_t batch = rule.next_batch(progress, preferred_batch);
    if (batch == 0) break;
    const double seconds = timed(c, batch, "timed batch");
    const double per_iteration = seconds / static_cast<double>(batch);
    samples.push_back(per_iteration);
    noise.add(per_iteration);
    busy_seconds += seconds;
    progress.samples += 1;
    progress.iterations += batch;
    progress.relative_noise = noise.relative_error();
    progress.elapsed_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (progress.samples == 1 && settings_.stopping.fixed_iterations == 0) {
      preferred_batch = batch_for(agreed(c, "batch re-sizing", [&] { return group.max(per_iteration); }));
    }
    // One round trip carries both answers: "I want more samples" and "I was signalled".
    const int local_bits = (rule.wants_more(progress) ? 1 : 0) | (pending_interruption() != 0 ? 2 : 0);
    const int bits = agreed(c, "stop agreement", [&] { return group.bitwise_or(local_bits); });
    if ((bits & 2) != 0) throw_interrupted(c);
    if ((bits & 1) == 0) break;
  }

  const SampleSummary local = summarize(samples);
  const double local_mean = busy_seconds / static_cast<double>(std::max<std::uint64_t>(progress.iterations, 1));
  RankValue slowest;
  agreed(c, "combining results", [&] {
  slowest = group.max_with_rank(local_mean);
  row.iterations = progress.iterations;
  row.samples = progress.samples;
  row.time_us = slowest.value * 1e6;
  row.slowest_rank = slowest.rank;
  row.slowest_host = group.hostnames()[static_cast<std::size_t>(slowest.rank)];
  row.time_min_us = group.min(local_mean) * 1e6;
  row.time_mean_us = group.sum(local_mean) / static_cast<double>(group.size()) * 1e6;
  row.p50_us = group.max(local.p50) * 1e6;
  row.p99_us = group.max(local.p99) * 1e6;
  const std::uint64_t fewest_samples = static_cast<std::uint64_t>(group.min(static_cast<double>(local.count)));
  const double worst_error = group.max(local.relative_error);
  if (fewest_samples >= 2) row.noise = worst_error;
  });
  row.algbw_gbps = algorithm_bandwidth_gbps(c.shape.bytes, slowest.value);
  row.busbw_gbps = row.algbw_gbps * bus_bandwidth_factor(c.op, backend_.ranks());
  return row;
}

}  // namespace commbench
