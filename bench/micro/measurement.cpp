#include "measurement.hpp"

#include <mpi.h>

#include <memory>
#include <utility>
#include <vector>

namespace commbench::micro {
namespace {

// One batch as a collective is timed: started together, so no rank's batch absorbs
// the others' lateness, and as slow as its slowest rank (taking the max also makes
// every rank record the same time).
double slowest_rank_batch_seconds(AllreduceContender& contender) {
  MPI_Barrier(MPI_COMM_WORLD);
  double seconds = contender.timed_batch();
  MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return seconds;
}

std::unique_ptr<AllreduceContender> contender_for(Variant variant, const MessageSize& size, Backend& backend) {
  return make_contender(variant, backend, MPI_COMM_WORLD, size.bytes, size.ops_per_batch);
}

}  // namespace

void measure_variant(benchmark::State& state, const MessageSize& size, Variant variant, int round, Backend& backend,
                     OverheadSummary& summary) {
  const auto contender = contender_for(variant, size, backend);
  // An untimed batch first, so first-use costs (connection and protocol setup, cold
  // caches) land outside the measurement for every variant alike.
  contender->timed_batch();
  std::vector<double> seconds_per_op;
  seconds_per_op.reserve(static_cast<std::size_t>(size.batches));
  for (auto _ : state) {
    const double batch_seconds = slowest_rank_batch_seconds(*contender);
    state.SetIterationTime(batch_seconds);
    seconds_per_op.push_back(batch_seconds / static_cast<double>(size.ops_per_batch));
  }
  const BatchTimes times = summary.record(size.label, variant, round, seconds_per_op);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(size.ops_per_batch));
  state.counters["ops_per_batch"] = static_cast<double>(size.ops_per_batch);
  state.counters["us_per_op"] = times.mean * 1e6;
  state.counters["us_per_op_median"] = times.median * 1e6;
}

void measure_alternating(benchmark::State& state, const MessageSize& size, Variant candidate,
                         bool candidate_allocated_first, Backend& backend, OverheadSummary& summary) {
  std::unique_ptr<AllreduceContender> bare;
  std::unique_ptr<AllreduceContender> measured;
  if (candidate_allocated_first) {
    measured = contender_for(candidate, size, backend);
    bare = contender_for(Variant::bare, size, backend);
  } else {
    bare = contender_for(Variant::bare, size, backend);
    measured = contender_for(candidate, size, backend);
  }
  bare->timed_batch();
  measured->timed_batch();

  std::vector<double> bare_seconds;
  std::vector<double> candidate_seconds;
  bool bare_first = true;
  for (auto _ : state) {
    double bare_batch = 0;
    double candidate_batch = 0;
    if (bare_first) {
      bare_batch = slowest_rank_batch_seconds(*bare);
      candidate_batch = slowest_rank_batch_seconds(*measured);
    } else {
      candidate_batch = slowest_rank_batch_seconds(*measured);
      bare_batch = slowest_rank_batch_seconds(*bare);
    }
    bare_first = !bare_first;
    state.SetIterationTime(bare_batch + candidate_batch);
    bare_seconds.push_back(bare_batch);
    candidate_seconds.push_back(candidate_batch);
  }
  const double overhead =
      summary.record_alternating(size.label, candidate, candidate_allocated_first, bare_seconds, candidate_seconds);
  state.counters["ops_per_batch"] = static_cast<double>(size.ops_per_batch);
  state.counters["overhead_pct"] = overhead * 100;
}

}  // namespace commbench::micro
