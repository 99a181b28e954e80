// Result rows as bench-collectives makes them, and their CSV, for the validate layer's tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "commbench/core/collective.hpp"
#include "commbench/core/result_row.hpp"
#include "commbench/report/csv_reporter.hpp"

namespace commbench::validate_test {

// A measured row of `op` at `bytes` on `ranks` ranks of one node, at `busbw` GB/s.
inline ResultRow row_of(Collective op, std::uint64_t bytes, int ranks, double busbw) {
  ResultRow r;
  r.backend = "mpi";
  r.op_case.op = op;
  r.op_case.dtype = DataType::float32;
  r.op_case.redop = reduces(op) ? ReduceOp::sum : ReduceOp::none;
  r.op_case.root = has_root(op) ? 0 : -1;
  r.op_case.shape = shape_for(op, bytes, 4, ranks);
  r.ranks = ranks;
  r.nodes = 1;
  r.slowest_host = "node,07";  // quoted in the CSV
  r.busbw_gbps = busbw;
  r.algbw_gbps = busbw / bus_bandwidth_factor(op, ranks);
  r.time_us = static_cast<double>(r.op_case.shape.bytes) / (r.algbw_gbps * 1e3);
  return r;
}

// The CSV bench-collectives writes of `rows`.
inline std::string csv_of(const std::vector<ResultRow>& rows) {
  std::string text = csv_header() + "\n";
  for (const ResultRow& r : rows) text += csv_line(row_fields(r)) + "\n";
  return text;
}

}  // namespace commbench::validate_test
