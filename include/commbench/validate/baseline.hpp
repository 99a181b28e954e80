// A baseline: the CSV of an earlier bench-collectives run (--csv), typically taken on a
// cluster known to be good. Threshold rules compare a new row with the baseline row of
// the same measurement: collective (with alltoallv's distribution), placement, element
// type, reduction, root, size and rank count. Rows are matched by these values, never by position, so a baseline may
// cover more or fewer sizes than the new run.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "commbench/core/op_case.hpp"

namespace commbench {

struct MeasurementKey {
  Collective op = Collective::allreduce;
  Placement placement = Placement::out_of_place;
  DataType dtype = DataType::float32;
  ReduceOp redop = ReduceOp::none;
  int root = -1;
  std::uint64_t bytes = 0;
  int ranks = 0;
  PeerDistribution distribution;  // alltoallv's, from the op column ("alltoallv(zipf:1.2)")

  auto operator<=>(const MeasurementKey&) const = default;
};

MeasurementKey key_of(const OpCase& c, int ranks);
// "allreduce 64MiB float sum out-of-place on 8 ranks"
std::string describe(const MeasurementKey& key);

struct BaselineRow {
  double time_us = 0;
  double algbw_gbps = 0;
  double busbw_gbps = 0;
  std::size_t line = 0;  // in the baseline file, for messages
  // Not part of the match (a baseline may come from another backend or layout on
  // purpose) but noted when they differ from the run: "" / 0 when the file has no column.
  std::string backend;
  int nodes = 0;
};

struct Baseline {
  std::string origin;  // "--baseline PATH"
  std::map<MeasurementKey, BaselineRow> rows;

  const BaselineRow* find(const MeasurementKey& key) const;
};

// Parses a commbench CSV of any schema version (columns are found by name; version 1
// lacks only columns a baseline does not need). UsageError "ORIGIN line N: ..." for a malformed file, a missing column,
// a value that is not what commbench writes there, or a measurement that appears twice; "ORIGIN: no measurements" for a
// header alone.
Baseline parse_baseline(std::string_view text, const std::string& origin);

}  // namespace commbench
