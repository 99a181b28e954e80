// micro-harness-overhead: how much time commbench's timed path adds to an MPI
// allreduce, against a bare MPI_Allreduce loop measured in the same run on the same
// ranks. Every rank must get the same arguments:
//   mpirun -np 2 build/bench/micro/micro-harness-overhead
// Method, targets and measured figures: docs/performance-micro.md.
#include <benchmark/benchmark.h>
#include <mpi.h>

#include <cstdint>
#include <exception>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "allreduce_contender.hpp"
#include "commbench/backend/mpi/mpi_backend.hpp"
#include "commbench/backend/mpi/mpi_bootstrap.hpp"
#include "measurement.hpp"
#include "overhead_summary.hpp"
#include "silent_reporter.hpp"

namespace commbench::micro {
namespace {

constexpr MessageSize kSizes[] = {
    {"8B", 8, 1000, 2400, benchmark::kMicrosecond, 0.05},
    {"64MiB", std::uint64_t{64} << 20, 1, 25, benchmark::kMillisecond, 0.02},
};

// Rounds interleave the benchmarks (bare, harness, ..., bare, harness, ...) instead of
// using Repetitions(), which would run all repetitions of one benchmark back to back
// and let drift on a busy machine land on one side only.
constexpr int kRounds = 10;

std::string benchmark_name(const MessageSize& size, const std::string& what, int round) {
  return std::string("allreduce/") + size.label + "/" + what + "/round:" + std::to_string(round);
}

void register_benchmark(const std::string& name, const MessageSize& size, std::function<void(benchmark::State&)> body) {
  benchmark::RegisterBenchmark(name.c_str(), std::move(body))
      ->Iterations(size.batches)
      ->UseManualTime()
      ->Unit(size.unit);
}

void register_benchmarks(Backend& backend, OverheadSummary& summary) {
  for (int round = 0; round < kRounds; ++round) {
    // Even rounds put bare first (in order of running, and in order of allocation for
    // the alternating pairs), odd rounds the other one, so neither side always
    // follows the other, the size switch, or gets the earlier-allocated memory.
    const bool bare_first = round % 2 == 0;
    for (const MessageSize& size : kSizes) {
      const Variant separate_order[] = {bare_first ? Variant::bare : Variant::harness,
                                        bare_first ? Variant::harness : Variant::bare, Variant::runner_reported};
      for (const Variant variant : separate_order)
        register_benchmark(benchmark_name(size, std::string(name_of(variant)), round), size,
                           [=, &backend, &summary](benchmark::State& state) {
                             measure_variant(state, size, variant, round, backend, summary);
                           });
      // Bare against bare is the control: whatever it shows is the method's own bias
      // and noise on this machine, not anything the harness does.
      for (const Variant candidate : {Variant::harness, Variant::bare}) {
        const std::string what = candidate == Variant::bare ? "alternating_bare_control" : "alternating_harness";
        register_benchmark(benchmark_name(size, what, round), size, [=, &backend, &summary](benchmark::State& state) {
          measure_alternating(state, size, candidate, !bare_first, backend, summary);
        });
      }
    }
  }
}

// Google Benchmark flags that would let ranks diverge, overridden after the user's
// own (the last occurrence of a flag wins).
std::vector<std::string> rank_safe_flags(int rank) {
  std::vector<std::string> flags = {
      // The shuffle is seeded per process: ranks would run benchmarks in different
      // orders and wait forever in mismatched collectives.
      "--benchmark_enable_random_interleaving=false",
      // Warm-up length is chosen from each rank's own clock.
      "--benchmark_min_warmup_time=0",
  };
  // One result file, written by rank 0; other ranks would truncate and overwrite it.
  if (rank != 0) flags.emplace_back("--benchmark_out=");
  return flags;
}

int run(int argc, char** argv, int rank, int ranks) {
  std::vector<std::string> extra = rank_safe_flags(rank);
  std::vector<char*> args(argv, argv + argc);
  for (std::string& flag : extra) args.push_back(flag.data());
  int arg_count = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&arg_count, args.data());
  // Same arguments everywhere, so every rank takes this exit or none does.
  if (benchmark::ReportUnrecognizedArguments(arg_count, args.data())) return 1;

  OverheadSummary summary;
  {
    mpi::MpiBackend backend(std::make_unique<mpi::MpiBootstrap>(MPI_COMM_WORLD));
    register_benchmarks(backend, summary);
    if (rank == 0) {
      benchmark::RunSpecifiedBenchmarks();
    } else {
      SilentReporter silent;
      benchmark::RunSpecifiedBenchmarks(&silent);
    }
    benchmark::ClearRegisteredBenchmarks();  // the lambdas refer to `backend`
  }
  benchmark::Shutdown();

  if (rank == 0) {
    std::vector<OverheadTarget> targets;
    for (const MessageSize& size : kSizes) targets.push_back({size.label, size.max_overhead});
    summary.print(std::cout, targets, ranks);
  }
  return 0;
}

}  // namespace
}  // namespace commbench::micro

int main(int argc, char** argv) {
  // Plain MPI_Init keeps MPI_ERRORS_ARE_FATAL on MPI_COMM_WORLD: a failing call aborts
  // the job instead of silently producing a timing.
  MPI_Init(&argc, &argv);
  int rank = 0;
  int ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  int status = 0;
  try {
    status = commbench::micro::run(argc, argv, rank, ranks);
  } catch (const std::exception& e) {
    // Another rank may be inside a collective; only an abort ends the job cleanly.
    std::cerr << "micro-harness-overhead: rank " << rank << ": " << e.what() << "\n";
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return status;
}
