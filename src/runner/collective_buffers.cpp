#include "commbench/runner/collective_buffers.hpp"

#include <algorithm>

#include "commbench/core/error.hpp"

namespace commbench {

BufferRequirement buffers_needed(std::span<const OpCase> plan) {
  BufferRequirement need;
  for (const OpCase& c : plan) {
    const BufferRequirement op_need = buffers_needed(plan, c.op);
    if (op_need.total() > need.total()) need = op_need;
  }
  return need;
}

BufferRequirement buffers_needed(std::span<const OpCase> plan, Collective op) {
  BufferRequirement need;
  for (const OpCase& c : plan) {
    if (c.op != op) continue;
    need.send_bytes = std::max(need.send_bytes, c.send_bytes());
    const std::uint64_t recv =
        c.placement == Placement::in_place ? std::max(c.send_bytes(), c.recv_bytes()) : c.recv_bytes();
    need.recv_bytes = std::max(need.recv_bytes, recv);
  }
  return need;
}

void CollectiveBuffers::allocate_for(std::span<const OpCase> plan) {
  per_op_.clear();
  for (const OpCase& c : plan) {
    const bool known =
        std::any_of(per_op_.begin(), per_op_.end(), [&](const auto& entry) { return entry.first == c.op; });
    if (!known) per_op_.emplace_back(c.op, buffers_needed(plan, c.op));
  }
  buffers_.reset();
  held_ = buffers_needed(plan);
  std::uint64_t scratch = 0;
  for (const OpCase& c : plan) scratch = std::max(scratch, backend_.library_scratch_bytes(c));
  backend_.require_memory(held_.total() + scratch, "-e/--max-bytes: the buffers and the library's scratch");
  buffers_ = backend_.allocate(held_.send_bytes, held_.recv_bytes);
}

Buffers& CollectiveBuffers::for_collective(Collective op) {
  if (!buffers_) throw BackendError("collective buffers used before they were allocated");
  BufferRequirement need;
  for (const auto& entry : per_op_)
    if (entry.first == op) need = entry.second;
  if (need != held_) {
    buffers_.reset();  // free first: holding both would double the peak
    buffers_ = backend_.allocate(need.send_bytes, need.recv_bytes);
    held_ = need;
  }
  return *buffers_;
}

}  // namespace commbench
