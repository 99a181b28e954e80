// Turns the benchmarks' batch times into the figure the acceptance target is stated
// in, harness time / bare time - 1 per message size, two ways:
//   - separate benchmarks: median over rounds of the harness benchmark's time per op,
//     over the same for the bare benchmark;
//   - alternating pairs: median over back-to-back (bare, harness) batch pairs of their
//     ratio, balanced over which side's buffers were allocated first (at 64 MiB that
//     alone moves a bare-vs-bare control by several percent: the "allocated first" and
//     "second" figures in results/mpi-host-2core/harness-overhead/README.md).
#pragma once

#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "allreduce_contender.hpp"

namespace commbench::micro {

struct OverheadTarget {
  std::string size_label;  // as in the benchmark names, e.g. "8B"
  double max_overhead;     // acceptance limit as a fraction, e.g. 0.05
};

// One benchmark's time per operation, from its batches (slowest rank of each).
struct BatchTimes {
  double mean = 0;    // what Google Benchmark reports as the benchmark's time
  double median = 0;  // the same, insensitive to batches another process interrupted
};

class OverheadSummary {
 public:
  // Records one separate benchmark (one variant, one size, one round).
  BatchTimes record(const std::string& size_label, Variant variant, int round, std::span<const double> seconds_per_op);

  // Records one alternating benchmark and returns the median over its pairs of
  // candidate / bare - 1.
  double record_alternating(const std::string& size_label, Variant candidate, bool candidate_allocated_first,
                            std::span<const double> bare_seconds, std::span<const double> candidate_seconds);

  // Lines for the sizes that have results (a --benchmark_filter may have left some out).
  void print(std::ostream& out, std::span<const OverheadTarget> targets, int ranks) const;

 private:
  struct Entry {
    std::string size_label;
    Variant variant;
    int round;
    BatchTimes times;
  };
  struct PairSet {
    std::string size_label;
    Variant candidate;
    bool candidate_allocated_first;
    std::vector<double> overheads;  // candidate / bare - 1 per pair, rounds pooled
  };
  using Statistic = double BatchTimes::*;

  std::vector<double> rounds_of(const std::string& size_label, Variant variant, Statistic statistic) const;
  double overhead(const std::string& size_label, Variant variant, Statistic statistic) const;
  // Per-round ratio variant/bare - 1, for rounds where both ran: shows how far apart
  // single rounds are, i.e. how much the medians can be trusted.
  std::vector<double> paired_overheads(const std::string& size_label, Variant variant) const;
  const std::vector<double>* pairs(const std::string& size_label, Variant candidate, bool allocated_first) const;

  void print_separate(std::ostream& out, const OverheadTarget& target) const;
  void print_alternating(std::ostream& out, const OverheadTarget& target, Variant candidate) const;

  std::vector<Entry> entries_;
  std::vector<PairSet> pair_sets_;
};

}  // namespace commbench::micro
