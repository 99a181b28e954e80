#include "commbench/core/buffer_region.hpp"

#include "commbench/core/collective_descriptor.hpp"

namespace commbench {
namespace {

BufferRegion in_place_region(InPlaceRegion where, const OpCase& c, int rank, std::uint64_t whole_elements) {
  if (where == InPlaceRegion::own_chunk_of_receive)
    return {BufferSide::receive, static_cast<std::uint64_t>(rank) * c.shape.count, c.shape.count};
  return {BufferSide::receive, 0, whole_elements};
}

}  // namespace

BufferRegion input_region(const OpCase& c, int rank) {
  if (c.placement == Placement::out_of_place) return {BufferSide::send, 0, c.shape.send_elements};
  return in_place_region(descriptor_of(c.op).in_place_input, c, rank, c.shape.send_elements);
}

BufferRegion output_region(const OpCase& c, int rank, int ranks) {
  if (descriptor_of(c.op).split_per_peer())
    return {BufferSide::receive, 0, peer_counts(c.distribution, c.shape.send_elements, ranks, rank).received()};
  if (c.placement == Placement::out_of_place) return {BufferSide::receive, 0, c.shape.recv_elements};
  return in_place_region(descriptor_of(c.op).in_place_output, c, rank, c.shape.recv_elements);
}

}  // namespace commbench
