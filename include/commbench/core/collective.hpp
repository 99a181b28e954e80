// The collectives commbench measures and the nccl-tests accounting that turns a time
// into algorithm and bus bandwidth.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace commbench {

enum class Collective { allreduce, allgather, reducescatter, broadcast, reduce, alltoall, sendrecv };

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
// allgather, reducescatter, alltoall (n-1)/n; broadcast, reduce, sendrecv 1.
// With n == 1 the (n-1) factors are 0: nothing crosses a bus.
double bus_bandwidth_factor(Collective op, int ranks);

// How a "size" in the sweep maps onto buffers. `bytes` is the nccl-tests size column:
// the whole buffer for allreduce/broadcast/reduce/sendrecv, the gathered (output) buffer
// for allgather, the scattered (input) buffer for reducescatter, the send buffer of
// alltoall. Element counts are per rank.
struct BufferShape {
  std::uint64_t bytes = 0;          // the size column after rounding to whole elements
  std::uint64_t count = 0;          // elements per rank per chunk (nccl-tests "count")
  std::uint64_t send_elements = 0;  // elements in the send buffer of one rank
  std::uint64_t recv_elements = 0;  // elements in the receive buffer of one rank
};

// Rounds `requested_bytes` down to a whole number of elements (and of chunks for the
// chunked collectives) but never below one element per rank.
BufferShape shape_for(Collective op, std::uint64_t requested_bytes, std::size_t element_size, int ranks);

}  // namespace commbench
