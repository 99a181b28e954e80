#include "spin_kernel.hpp"

namespace commbench::nccl {
namespace {

// %globaltimer counts nanoseconds of wall-clock time on every architecture NCCL supports,
// unlike clock64, whose rate follows the SM clock and its boosts.
__device__ __forceinline__ std::uint64_t global_nanoseconds() {
  std::uint64_t now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  return now;
}

__global__ void spin_for(std::uint64_t nanoseconds) {
  // Each block measures from its own start: blocks start together (the grid fits on the
  // GPU in one wave), and a block that starts late must still spin the whole time.
  __shared__ std::uint64_t start;
  if (threadIdx.x == 0) start = global_nanoseconds();
  __syncthreads();
  while (global_nanoseconds() - start < nanoseconds) {
  }
}

}  // namespace

void launch_spin(std::uint64_t nanoseconds, int multiprocessors, cudaStream_t stream) {
  spin_for<<<multiprocessors, kSpinThreadsPerBlock, 0, stream>>>(nanoseconds);
}

}  // namespace commbench::nccl
