// The buffers a sweep of collectives runs on. Sized per collective: the memory a run holds
// is what its current collective needs, not the sum over all of them, and the largest
// need is allocated first so an impossible size fails before the sweep.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "commbench/backend/backend.hpp"
#include "commbench/core/op_case.hpp"

namespace commbench {

// Buffer sizes for a set of cases (in-place collectives keep their input in the receive
// buffer).
struct BufferRequirement {
  std::uint64_t send_bytes = 0;
  std::uint64_t recv_bytes = 0;
  std::uint64_t total() const { return send_bytes + recv_bytes; }
  bool operator==(const BufferRequirement&) const = default;
};
BufferRequirement buffers_needed(std::span<const OpCase> plan);
// The same, for the cases of `plan` that run collective `op`.
BufferRequirement buffers_needed(std::span<const OpCase> plan, Collective op);

class CollectiveBuffers {
 public:
  explicit CollectiveBuffers(Backend& backend) : backend_(backend) {}

  // Collective: allocates the largest buffers any collective of `plan` needs (UsageError
  // on every rank when the memory cannot be had).
  void allocate_for(std::span<const OpCase> plan);
  // Collective: the buffers for `op`, re-allocated when its need differs from what is held.
  Buffers& for_collective(Collective op);
  bool allocated() const { return buffers_ != nullptr; }

 private:
  Backend& backend_;
  std::unique_ptr<Buffers> buffers_;
  BufferRequirement held_;
  std::vector<std::pair<Collective, BufferRequirement>> per_op_;
};

}  // namespace commbench
