// The kernels of bench-p2p --local: an SM copy that stores into a peer's memory, the
// byte pattern its checks use, and a single-thread pointer chase that times one load at a
// time from a peer's or the host's memory. Internal to the NCCL backend.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace commbench::nccl {

#ifdef __CUDACC__
#define COMMBENCH_HOST_AND_DEVICE __host__ __device__
#else
#define COMMBENCH_HOST_AND_DEVICE
#endif

// The byte a checked transfer's source holds at `index`, different for each `seed` (the
// sending device) so a copy from the wrong buffer is caught too. The host fills and checks
// host memory with it, the kernels below device memory.
COMMBENCH_HOST_AND_DEVICE inline unsigned char copy_pattern_byte(std::uint64_t index, unsigned seed) {
  return static_cast<unsigned char>(((index * 2654435761ULL) >> 11) ^ (seed * 0x9dU) ^ index);
}

void launch_fill_pattern(unsigned char* data, std::uint64_t bytes, unsigned seed, cudaStream_t stream);
// Adds to *device_counter the bytes of `data` that differ from the pattern of `seed`.
void launch_count_pattern_mismatches(const unsigned char* data, std::uint64_t bytes, unsigned seed,
                                     unsigned long long* device_counter, cudaStream_t stream);

// Copies `bytes` from `source` to `destination` with the SMs of the GPU `stream` belongs
// to: `blocks` blocks whose threads each load and store 16 bytes at a time.
void launch_sm_copy(const void* source, void* destination, std::uint64_t bytes, int blocks, cudaStream_t stream);

// One thread follows `loads` links of `chain` (each element the index of the next), each
// load waiting for the one before; the last index goes to *sink so nothing is skipped.
void launch_pointer_chase(const std::uint64_t* chain, std::uint64_t loads, std::uint64_t* sink, cudaStream_t stream);

}  // namespace commbench::nccl
