// The collectives commbench measures and the nccl-tests accounting that turns a time
// into algorithm and bus bandwidth.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "commbench/core/peer_distribution.hpp"

namespace commbench {

// Per-collective facts live in collective_descriptor.hpp; these functions read them.
enum class Collective { allreduce, allgather, reducescatter, broadcast, reduce, alltoall, sendrecv, alltoallv };
inline constexpr std::size_t kCollectiveCount = 8;

// Whether `table` (entries with an `op` member) lists every collective once, in the order
// of the enum, so that it can be indexed by it: per-collective tables assert this.
template <typename Entry, std::size_t N>
constexpr bool lists_every_collective_in_order(const std::array<Entry, N>& table) {
  for (std::size_t i = 0; i < N; ++i)
    if (static_cast<std::size_t>(table[i].op) != i) return false;
  return N == kCollectiveCount;
}

// The collectives of --op all.
std::span<const Collective> all_collectives();
std::string_view name_of(Collective op);
Collective parse_collective(std::string_view text, std::string_view flag);
// Every spelling parse_collective_list accepts, for help texts.
std::string accepted_collective_names();
// Comma-separated list or "all".
std::vector<Collective> parse_collective_list(std::string_view text, std::string_view flag);

bool reduces(Collective op);   // takes a reduction operator
bool has_root(Collective op);  // broadcast, reduce

// busbw = algbw * bus_bandwidth_factor. nccl-tests convention: allreduce 2(n-1)/n;
// allgather, reducescatter, alltoall, alltoallv (n-1)/n; broadcast, reduce, sendrecv 1.
// With n == 1 the (n-1) factors are 0: nothing crosses a bus.
double bus_bandwidth_factor(Collective op, int ranks);

// How a "size" in the sweep maps onto buffers. `bytes` is the nccl-tests size column:
// the whole buffer for allreduce/broadcast/reduce/sendrecv, the gathered (output) buffer
// for allgather, the scattered (input) buffer for reducescatter, the send buffer of
// alltoall and alltoallv (for alltoallv: what each rank sends, the same on every rank).
// Element counts are per rank.
struct BufferShape {
  std::uint64_t bytes = 0;          // the size column after rounding to whole elements
  std::uint64_t count = 0;          // elements per rank per chunk (nccl-tests "count")
  std::uint64_t send_elements = 0;  // elements in the send buffer of one rank
  std::uint64_t recv_elements = 0;  // elements in the receive buffer of one rank
};

// Rounds `requested_bytes` down to a whole number of elements (and of chunks for the
// chunked collectives) but never below one element per rank.
// alltoallv: `count` is the mean elements per peer, every rank sends count x ranks
// elements split by `distribution`, and recv_elements is the most any rank receives.
BufferShape shape_for(Collective op, std::uint64_t requested_bytes, std::size_t element_size, int ranks,
                      const PeerDistribution& distribution = {});

}  // namespace commbench
