// One measurement the runner performs: a collective with its element type, reduction,
// root, buffer placement and size. A plan is a list of these.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "commbench/core/collective.hpp"
#include "commbench/core/dtype.hpp"
#include "commbench/core/peer_distribution.hpp"
#include "commbench/core/reduce_op.hpp"

namespace commbench {

enum class Placement { out_of_place, in_place };

std::string_view name_of(Placement placement);  // "out", "in"
// "out", "in" or "both" (out then in, like the two halves of an nccl-tests row).
std::vector<Placement> parse_placements(std::string_view text, std::string_view flag);

struct OpCase {
  Collective op = Collective::allreduce;
  DataType dtype = DataType::float32;
  ReduceOp redop = ReduceOp::none;  // none unless reduces(op)
  int root = -1;                    // -1 unless has_root(op)
  Placement placement = Placement::out_of_place;
  // alltoallv: how each rank's data splits over the destinations; uniform (and unused) otherwise.
  PeerDistribution distribution;
  BufferShape shape;
  // The sweep's size this case was planned for (-b/-e/-f/-i), before rounding to whole
  // elements per rank: what users name sizes by, e.g. in threshold rules.
  std::uint64_t requested_bytes = 0;

  std::uint64_t send_bytes() const { return shape.send_elements * size_of(dtype); }
  std::uint64_t recv_bytes() const { return shape.recv_elements * size_of(dtype); }
};

// "allreduce 1MiB float sum out-of-place", "alltoallv 1MiB float zipf:1.2 out-of-place" —
// how messages and the watchdog name a case.
std::string describe(const OpCase& c);

// The op column of a result row: the collective's name, and for alltoallv its
// distribution too ("alltoallv(zipf:1.2)"), so a row says what it measured on its own.
std::string op_label(const OpCase& c);
struct OpLabel {
  Collective op = Collective::allreduce;
  PeerDistribution distribution;
};
// The inverse of op_label (for baselines); UsageError naming `where` otherwise.
OpLabel parse_op_label(std::string_view text, std::string_view where);

struct PlanRequest {
  std::vector<Collective> ops;
  std::vector<DataType> dtypes;
  std::vector<ReduceOp> redops;  // applied to reducing collectives only
  std::vector<Placement> placements;
  std::vector<std::uint64_t> sizes;
  int root = 0;
  int ranks = 1;
  PeerDistribution alltoallv_distribution;  // --alltoallv-distribution
};

// Expands the request in the order op, dtype, redop, size, placement. Sizes that round
// to the same buffer shape for a collective are measured once.
std::vector<OpCase> build_plan(const PlanRequest& request);

}  // namespace commbench
