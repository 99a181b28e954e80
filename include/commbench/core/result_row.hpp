// One measurement as every reporter sees it. The column names and their order are a
// documented, stable contract (docs/output-format.md): CSV and JSON both come from
// row_fields(), so they can never disagree.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "commbench/core/op_case.hpp"
#include "commbench/core/stopping_rule.hpp"

namespace commbench {

using FieldValue = std::variant<std::monostate, std::string, std::int64_t, double>;

// A parameter or result a command adds to its rows without a new fixed struct (like
// google/benchmark's counters): a pattern's step name, a matrix row's peer. The command
// declares the names up front (RunContext::extra_columns) so the CSV header has them.
struct ExtraField {
  std::string name;
  FieldValue value;
};

struct ResultRow {
  std::string backend;
  OpCase op_case;
  int ranks = 0;  // communicator ranks (one per GPU with NCCL, one per process with MPI)
  int nodes = 0;
  std::uint64_t iterations = 0;  // timed iterations per rank
  std::uint64_t samples = 0;     // timed batches per rank
  // Per-iteration times in microseconds. time_us is the max over ranks of each rank's
  // mean: a collective is as slow as its slowest rank.
  double time_us = 0;
  double time_min_us = 0;   // min over ranks of the per-rank mean
  double time_mean_us = 0;  // mean over ranks of the per-rank mean
  double p50_us = 0;        // max over ranks of the per-rank median batch sample
  double p99_us = 0;        // max over ranks of the per-rank 99th percentile
  // Max over ranks of the relative standard error of the per-rank mean; empty when a
  // rank took a single sample (nothing to estimate it from).
  std::optional<double> noise;
  int slowest_rank = 0;  // the process (MPI rank) whose mean time was largest
  std::string slowest_host;
  double algbw_gbps = 0;
  double busbw_gbps = 0;
  std::optional<double> theoretical_busbw_gbps;     // spec bound from the bandwidth model
  std::optional<double> achievable_busbw_gbps;      // the same bound with NCCL's achievable link figures
  std::optional<double> efficiency;                 // busbw / theoretical_busbw (spec)
  std::optional<std::uint64_t> wrong;               // mismatching elements over all ranks; empty unless --check
  std::optional<bool> threshold_passed;             // whether every threshold rule that selects the row held
  StopReason stop_reason = StopReason::keep_going;  // why its measurement stopped (agreed over ranks)
  // What NCCL chose for the case's launches (its profiler plugin, rank 0's view): the
  // most frequent algorithm, protocol and channel count, "mixed" when one varied, and
  // then nccl_split says how ("algo RING 12, TREE 4"); empty where nothing was reported.
  std::string nccl_algo, nccl_proto, nccl_channels, nccl_split;
  // The algorithm the bandwidth model's theoretical bound is for ("ring", "NVLS", "tree",
  // "NVLS-tree", "CollNet"), beside NCCL's choice; empty where the model has no bound.
  std::string model_algo;
  std::vector<ExtraField> extra;  // the command's own fields, after the fixed columns
};

struct Field {
  std::string_view name;
  FieldValue value;
};

// The fixed columns, in order, then the row's extra fields in the row's order (their
// names point into the row: keep it alive while the fields are used).
std::span<const std::string_view> row_columns();
std::vector<Field> row_fields(const ResultRow& row);

// Whether the row's busbw is a bandwidth: with one rank nothing crosses a link, and the
// bus factor makes busbw 0 or the speed of a local copy. The reporters leave it empty then
// ("-" in the table) and the average leaves the row out.
bool has_bus_bandwidth(const ResultRow& row);

// What a run's footer says of its rows: nccl-tests' average busbw and the wrong elements.
class RowTotals {
 public:
  void add(const ResultRow& row);
  // The mean busbw of the rows that have one; 0 before any row (as nccl-tests prints),
  // empty when rows came and none had a busbw (one rank).
  std::optional<double> average_busbw_gbps() const;
  // The sum of the checked rows' wrong elements; empty when no row was checked.
  std::optional<std::uint64_t> wrong_elements() const { return wrong_; }

 private:
  std::size_t rows_ = 0;
  std::size_t bus_rows_ = 0;
  double busbw_sum_ = 0;
  std::optional<std::uint64_t> wrong_;
};

// algbw = bytes / time (GB = 1e9 bytes); busbw = algbw * bus_bandwidth_factor.
double algorithm_bandwidth_gbps(std::uint64_t bytes, double seconds);

}  // namespace commbench
