#include "commbench/core/collective_descriptor.hpp"

#include <array>
#include <cstddef>

namespace commbench {
namespace {

using enum Chunks;
using enum InPlaceRegion;

// One row per collective, in the order of the Collective enum (checked below).
constexpr std::array kDescriptors{
    CollectiveDescriptor{.op = Collective::allreduce,
                         .name = "allreduce",
                         .alias = "all_reduce",
                         .in_op_all = true,
                         .send_chunks = one,
                         .receive_chunks = one,
                         .bus_factor = BusFactor::twice_ring,
                         .reduces = true,
                         .rooted = false,
                         .in_place_input = whole_receive_buffer,
                         .in_place_output = whole_receive_buffer,
                         .check_rule = CheckRule::reduced_everywhere,
                         .traffic = BusTraffic::ring},
    CollectiveDescriptor{.op = Collective::allgather,
                         .name = "allgather",
                         .alias = "all_gather",
                         .in_op_all = true,
                         .send_chunks = one,
                         .receive_chunks = per_rank,
                         .bus_factor = BusFactor::ring,
                         .reduces = false,
                         .rooted = false,
                         .in_place_input = own_chunk_of_receive,
                         .in_place_output = whole_receive_buffer,
                         .check_rule = CheckRule::gathered_chunks,
                         .traffic = BusTraffic::ring},
    CollectiveDescriptor{.op = Collective::reducescatter,
                         .name = "reducescatter",
                         .alias = "reduce_scatter",
                         .in_op_all = true,
                         .send_chunks = per_rank,
                         .receive_chunks = one,
                         .bus_factor = BusFactor::ring,
                         .reduces = true,
                         .rooted = false,
                         .in_place_input = whole_receive_buffer,
                         .in_place_output = own_chunk_of_receive,
                         .check_rule = CheckRule::reduced_own_chunk,
                         .traffic = BusTraffic::ring},
    CollectiveDescriptor{.op = Collective::broadcast,
                         .name = "broadcast",
                         .alias = "bcast",
                         .in_op_all = true,
                         .send_chunks = one,
                         .receive_chunks = one,
                         .bus_factor = BusFactor::one,
                         .reduces = false,
                         .rooted = true,
                         .in_place_input = whole_receive_buffer,
                         .in_place_output = whole_receive_buffer,
                         .check_rule = CheckRule::copied_from_root,
                         .traffic = BusTraffic::ring},
    CollectiveDescriptor{.op = Collective::reduce,
                         .name = "reduce",
                         .alias = "",
                         .in_op_all = true,
                         .send_chunks = one,
                         .receive_chunks = one,
                         .bus_factor = BusFactor::one,
                         .reduces = true,
                         .rooted = true,
                         .in_place_input = whole_receive_buffer,
                         .in_place_output = whole_receive_buffer,
                         .check_rule = CheckRule::reduced_at_root,
                         .traffic = BusTraffic::ring},
    CollectiveDescriptor{.op = Collective::alltoall,
                         .name = "alltoall",
                         .alias = "all_to_all",
                         .in_op_all = true,
                         .send_chunks = per_rank,
                         .receive_chunks = per_rank,
                         .bus_factor = BusFactor::ring,
                         .reduces = false,
                         .rooted = false,
                         .in_place_input = whole_receive_buffer,
                         .in_place_output = whole_receive_buffer,
                         .check_rule = CheckRule::exchanged_chunks,
                         .traffic = BusTraffic::all_pairs},
    CollectiveDescriptor{.op = Collective::sendrecv,
                         .name = "sendrecv",
                         .alias = "send_recv",
                         .in_op_all = true,
                         .send_chunks = one,
                         .receive_chunks = one,
                         .bus_factor = BusFactor::one,
                         .reduces = false,
                         .rooted = false,
                         .in_place_input = whole_receive_buffer,
                         .in_place_output = whole_receive_buffer,
                         .check_rule = CheckRule::from_previous_rank,
                         .traffic = BusTraffic::neighbour_pair},
    // Not in --op all: nccl-tests has no alltoallv, and its rows depend on a distribution.
    CollectiveDescriptor{
        .op = Collective::alltoallv,
        .name = "alltoallv",
        .alias = "all_to_all_v",
        .in_op_all = false,
        .send_chunks = per_rank,
        .receive_chunks = by_peer_split,
        .bus_factor = BusFactor::ring,
        .reduces = false,
        .rooted = false,
        .in_place_input = none,
        .in_place_output = none,
        .check_rule = CheckRule::from_one_source,
        .traffic = BusTraffic::all_pairs,
        .no_in_place_reason = "a rank receives a different amount than it sends, so one buffer cannot serve as both"},
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
