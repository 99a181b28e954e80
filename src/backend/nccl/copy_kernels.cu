#include "copy_kernels.hpp"

namespace commbench::nccl {
namespace {

constexpr int kThreadsPerBlock = 512;

__global__ void fill_pattern(unsigned char* data, std::uint64_t bytes, unsigned seed) {
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < bytes;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
    data[i] = copy_pattern_byte(i, seed);
}

__global__ void count_pattern_mismatches(const unsigned char* data, std::uint64_t bytes, unsigned seed,
                                         unsigned long long* counter) {
  unsigned long long wrong = 0;
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < bytes;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
    wrong += data[i] != copy_pattern_byte(i, seed);
  if (wrong > 0) atomicAdd(counter, wrong);
}

// 16-byte loads and stores (cudaMalloc aligns to 256 bytes); the last bytes one at a time.
__global__ void sm_copy(const uint4* __restrict__ source, uint4* __restrict__ destination, std::uint64_t vectors,
                        const unsigned char* __restrict__ tail_source, unsigned char* __restrict__ tail_destination,
                        unsigned tail_bytes) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < vectors; i += stride)
    destination[i] = source[i];
  if (blockIdx.x == 0 && threadIdx.x < tail_bytes) tail_destination[threadIdx.x] = tail_source[threadIdx.x];
}

__global__ void pointer_chase(const std::uint64_t* chain, std::uint64_t loads, std::uint64_t* sink) {
  // volatile: every load goes to memory (through the peer's or the host's link), none is
  // served from this SM's L1 or hoisted out of the loop.
  const volatile std::uint64_t* links = chain;
  std::uint64_t at = 0;
  for (std::uint64_t i = 0; i < loads; ++i) at = links[at];
  *sink = at;
}

int blocks_for(std::uint64_t items) {
  const std::uint64_t blocks = (items + kThreadsPerBlock - 1) / kThreadsPerBlock;
  return static_cast<int>(blocks < 1024 ? (blocks == 0 ? 1 : blocks) : 1024);
}

}  // namespace

void launch_fill_pattern(unsigned char* data, std::uint64_t bytes, unsigned seed, cudaStream_t stream) {
  fill_pattern<<<blocks_for(bytes), kThreadsPerBlock, 0, stream>>>(data, bytes, seed);
}

void launch_count_pattern_mismatches(const unsigned char* data, std::uint64_t bytes, unsigned seed,
                                     unsigned long long* device_counter, cudaStream_t stream) {
  count_pattern_mismatches<<<blocks_for(bytes), kThreadsPerBlock, 0, stream>>>(data, bytes, seed, device_counter);
}

void launch_sm_copy(const void* source, void* destination, std::uint64_t bytes, int blocks, cudaStream_t stream) {
  const std::uint64_t vectors = bytes / sizeof(uint4);
  const std::uint64_t copied = vectors * sizeof(uint4);
  sm_copy<<<blocks, kThreadsPerBlock, 0, stream>>>(
      static_cast<const uint4*>(source), static_cast<uint4*>(destination), vectors,
      static_cast<const unsigned char*>(source) + copied, static_cast<unsigned char*>(destination) + copied,
      static_cast<unsigned>(bytes - copied));
}

void launch_pointer_chase(const std::uint64_t* chain, std::uint64_t loads, std::uint64_t* sink, cudaStream_t stream) {
  pointer_chase<<<1, 1, 0, stream>>>(chain, loads, sink);
}

}  // namespace commbench::nccl
