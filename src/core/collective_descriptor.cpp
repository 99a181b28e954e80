#include "commbench/core/collective_descriptor.hpp"

#include <array>
#include <cstddef>

namespace commbench {
namespace {

using enum Chunks;
using enum InPlaceRegion;

// One row per collective, in the order of the Collective enum (checked below).
constexpr std::array kDescriptors{
    CollectiveDescriptor{Collective::allreduce, "allreduce", "all_reduce", true, one, one, BusFactor::twice_ring, true,
                         false, whole_receive_buffer, whole_receive_buffer, CheckRule::reduced_everywhere,
                         BusTraffic::ring},
    CollectiveDescriptor{Collective::allgather, "allgather", "all_gather", true, one, per_rank, BusFactor::ring, false,
                         false, own_chunk_of_receive, whole_receive_buffer, CheckRule::gathered_chunks,
                         BusTraffic::ring},
    CollectiveDescriptor{Collective::reducescatter, "reducescatter", "reduce_scatter", true, per_rank, one,
                         BusFactor::ring, true, false, whole_receive_buffer, own_chunk_of_receive,
                         CheckRule::reduced_own_chunk, BusTraffic::ring},
    CollectiveDescriptor{Collective::broadcast, "broadcast", "bcast", true, one, one, BusFactor::one, false, true,
                         whole_receive_buffer, whole_receive_buffer, CheckRule::copied_from_root, BusTraffic::ring},
    CollectiveDescriptor{Collective::reduce, "reduce", "", true, one, one, BusFactor::one, true, true,
                         whole_receive_buffer, whole_receive_buffer, CheckRule::reduced_at_root, BusTraffic::ring},
    CollectiveDescriptor{Collective::alltoall, "alltoall", "all_to_all", true, per_rank, per_rank, BusFactor::ring,
                         false, false, whole_receive_buffer, whole_receive_buffer, CheckRule::exchanged_chunks,
                         BusTraffic::all_pairs},
    CollectiveDescriptor{Collective::sendrecv, "sendrecv", "send_recv", true, one, one, BusFactor::one, false, false,
                         whole_receive_buffer, whole_receive_buffer, CheckRule::from_previous_rank,
                         BusTraffic::neighbour_pair},
    // Not in --op all: nccl-tests has no alltoallv, and its rows depend on a distribution.
    CollectiveDescriptor{Collective::alltoallv, "alltoallv", "all_to_all_v", false, per_rank, by_peer_split,
                         BusFactor::ring, false, false, none, none, CheckRule::from_one_source,
                         BusTraffic::all_pairs,
                         "a rank receives a different amount than it sends, so one buffer cannot serve as both"},
};

static_assert(lists_every_collective_in_order(kDescriptors), "kDescriptors: one entry per collective, in enum order");

}  // namespace

double CollectiveDescriptor::bus_bandwidth_factor(int ranks) const {
  const double n = static_cast<double>(ranks);
  switch (bus_factor) {
    case BusFactor::twice_ring: return 2.0 * (n - 1.0) / n;
    case BusFactor::ring: return (n - 1.0) / n;
    case BusFactor::one: return 1.0;
  }
  return 1.0;
}

const CollectiveDescriptor& descriptor_of(Collective op) { return kDescriptors.at(static_cast<std::size_t>(op)); }

std::span<const CollectiveDescriptor> collective_descriptors() { return kDescriptors; }

std::optional<std::string> missing_in_place_form(Collective op) {
  const CollectiveDescriptor& d = descriptor_of(op);
  if (d.no_in_place_reason.empty()) return std::nullopt;
  return "in-place " + std::string(d.name) + ": " + std::string(d.no_in_place_reason);
}

}  // namespace commbench
