// The two benchmark bodies: one variant timed on its own, and two variants timed in
// alternating back-to-back batches. Both are collective: every rank runs them with the
// same arguments and the same iteration count.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>

#include "allreduce_contender.hpp"
#include "commbench/backend/backend.hpp"
#include "overhead_summary.hpp"

namespace commbench::micro {

struct MessageSize {
  const char* label;
  std::uint64_t bytes;
  // Allreduces per benchmark iteration. At 8 B one op lasts well under a microsecond:
  // timed one at a time, the clock reads and the call into the harness would be
  // charged to every op, whereas the Runner times multi-millisecond batches. 1000 ops
  // amortise them the same way. At 64 MiB one op (tens of ms) is long enough alone.
  std::uint64_t ops_per_batch;
  // Benchmark iterations per round; about a second per variant on a 2-core machine.
  // Fixed, never time-based: every rank must run exactly as many collectives as the
  // others, and a count each rank chose from its own clock could differ.
  benchmark::IterationCount batches;
  benchmark::TimeUnit unit;
  double max_overhead;  // acceptance target for the harness, as a fraction
};

// Each iteration is one batch of `variant`; the benchmark's time is the slowest rank's.
void measure_variant(benchmark::State& state, const MessageSize& size, Variant variant, int round, Backend& backend,
                     OverheadSummary& summary);

// Each iteration is one bare batch and one `candidate` batch back to back, in turns
// which goes first, so both halves of a pair see the same machine: load from other
// processes changes within a second and can land on one side of two separate
// benchmarks, but mostly cancels within a pair. The benchmark's time is the pair's.
// `candidate_allocated_first` picks whose buffers are allocated (and first touched)
// first; the summary balances it across rounds, see OverheadSummary.
void measure_alternating(benchmark::State& state, const MessageSize& size, Variant candidate,
                         bool candidate_allocated_first, Backend& backend, OverheadSummary& summary);

}  // namespace commbench::micro
