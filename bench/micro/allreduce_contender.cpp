#include "allreduce_contender.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "commbench/core/collective.hpp"
#include "commbench/core/op_case.hpp"
#include "commbench/runner/runner.hpp"

namespace commbench::micro {
namespace {

OpCase float_sum_allreduce(std::uint64_t bytes, int ranks) {
  OpCase c;
  c.op = Collective::allreduce;
  c.dtype = DataType::float32;
  c.redop = ReduceOp::sum;
  c.placement = Placement::out_of_place;
  c.shape = shape_for(Collective::allreduce, bytes, sizeof(float), ranks);
  return c;
}

struct FreeDeleter {
  void operator()(void* p) const noexcept { std::free(p); }
};
using HostMemory = std::unique_ptr<void, FreeDeleter>;

// Page-aligned like commbench's own host buffers: a plain malloc of 64 MiB starts 16
// bytes past a page, and misaligned vector loads in the reduction would then show up
// as a (negative) harness "overhead" that has nothing to do with the harness.
HostMemory touched_page_aligned(std::uint64_t bytes) {
  constexpr std::uint64_t kPage = 4096;
  const std::uint64_t rounded = (std::max<std::uint64_t>(bytes, 1) + kPage - 1) / kPage * kPage;
  void* p = std::aligned_alloc(kPage, rounded);
  if (p == nullptr) throw std::bad_alloc();
  // Fault every page in now, outside any timed batch, as the harness does.
  std::memset(p, 0, rounded);
  return HostMemory(p);
}

class BareAllreduce final : public AllreduceContender {
 public:
  BareAllreduce(MPI_Comm comm, std::uint64_t bytes, std::uint64_t ops_per_batch)
      : comm_(comm),
        count_(static_cast<int>(bytes / sizeof(float))),
        ops_per_batch_(ops_per_batch),
        send_(touched_page_aligned(bytes)),
        recv_(touched_page_aligned(bytes)) {}

  // Deliberately nothing but the loop: MPI_COMM_WORLD's default error handler aborts
  // on failure, so there is no return code worth checking here.
  double timed_batch() override {
    const double start = MPI_Wtime();
    for (std::uint64_t i = 0; i < ops_per_batch_; ++i)
      MPI_Allreduce(send_.get(), recv_.get(), count_, MPI_FLOAT, MPI_SUM, comm_);
    return MPI_Wtime() - start;
  }

 private:
  MPI_Comm comm_;
  int count_;
  std::uint64_t ops_per_batch_;
  HostMemory send_;
  HostMemory recv_;
};

// Timed from outside with the same clock as the bare loop, so the figure includes
// everything the harness adds per batch (virtual dispatch, per-operation argument
// translation and error checks, its own clock reads), not just what it reports.
class HarnessAllreduce final : public AllreduceContender {
 public:
  // Held as the Backend interface, as the Runner holds it: through MpiBackend& the
  // compiler could devirtualise the call and measure a path commbench never takes.
  HarnessAllreduce(Backend& backend, std::uint64_t bytes, std::uint64_t ops_per_batch)
      : backend_(backend),
        case_(float_sum_allreduce(bytes, backend.ranks())),
        ops_per_batch_(ops_per_batch),
        buffers_(backend.allocate(case_.send_bytes(), case_.recv_bytes())) {}

  double timed_batch() override {
    const double start = MPI_Wtime();
    backend_.time_batch(case_, *buffers_, ops_per_batch_);
    return MPI_Wtime() - start;
  }

 private:
  Backend& backend_;
  OpCase case_;
  std::uint64_t ops_per_batch_;
  std::unique_ptr<Buffers> buffers_;
};

// What a bench-collectives result row would say for these operations: the Runner's
// own time (slowest rank's mean per iteration) times the iterations. It leaves out the
// Runner's calibration operation and per-batch agreement, which are outside the timed
// region by design, so it answers "is the reported time inflated?" rather than "what
// does a Runner::run call cost?".
class RunnerReportedAllreduce final : public AllreduceContender {
 public:
  RunnerReportedAllreduce(Backend& backend, std::uint64_t bytes, std::uint64_t ops_per_batch)
      : case_(float_sum_allreduce(bytes, backend.ranks())), runner_(backend, settings_for(ops_per_batch)) {
    const std::vector<OpCase> plan{case_};
    runner_.prepare(plan);
  }

  double timed_batch() override {
    const ResultRow row = runner_.run(case_);
    return row.time_us * 1e-6 * static_cast<double>(row.iterations);
  }

 private:
  static RunnerSettings settings_for(std::uint64_t ops_per_batch) {
    RunnerSettings settings;
    settings.stopping.fixed_iterations = ops_per_batch;
    // The micro-benchmark warms up every contender alike before timing; the Runner's
    // own warm-up would only add untimed 64 MiB operations to the wall time.
    settings.warmup_iterations = 0;
    return settings;
  }

  OpCase case_;
  Runner runner_;
};

}  // namespace

std::string_view name_of(Variant variant) {
  switch (variant) {
    case Variant::bare: return "bare";
    case Variant::harness: return "harness";
    case Variant::runner_reported: return "runner_reported";
  }
  return "?";
}

std::unique_ptr<AllreduceContender> make_contender(Variant variant, Backend& backend, MPI_Comm bare_comm,
                                                   std::uint64_t bytes, std::uint64_t ops_per_batch) {
  switch (variant) {
    case Variant::bare: return std::make_unique<BareAllreduce>(bare_comm, bytes, ops_per_batch);
    case Variant::harness: return std::make_unique<HarnessAllreduce>(backend, bytes, ops_per_batch);
    case Variant::runner_reported: return std::make_unique<RunnerReportedAllreduce>(backend, bytes, ops_per_batch);
  }
  return nullptr;
}

}  // namespace commbench::micro
