// Where one rank's input lives before a collective and its result after it, as element
// ranges of the send or receive buffer. Taken from the collective's descriptor, so both
// backends fill and check the same places; a backend whose library puts a result
// elsewhere (MPI) says so next to its call.
#pragma once

#include <cstdint>

#include "commbench/core/op_case.hpp"

namespace commbench {

enum class BufferSide { send, receive };

struct BufferRegion {
  BufferSide buffer = BufferSide::send;
  std::uint64_t first_element = 0;  // offset into the buffer, in elements
  std::uint64_t elements = 0;
};

// In-place cases read their input from the receive buffer.
BufferRegion input_region(const OpCase& c, int rank);
// nccl-tests' conventions: in-place reducescatter writes chunk `rank` of the receive buffer;
// alltoallv fills what `rank` receives of the receive buffer.
BufferRegion output_region(const OpCase& c, int rank, int ranks);

}  // namespace commbench
