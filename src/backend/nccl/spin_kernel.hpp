// The GPU compute stand-in's kernel: every thread spins on the GPU's global nanosecond
// timer until the requested time has passed since its block started.
//
// What it occupies (a decision, since NCCL's kernels need SMs too): one block of
// kSpinThreadsPerBlock threads on each SM. That is 4 warps of an SM's 64, few registers
// and 8 bytes of shared memory, so NCCL's blocks (one per channel, up to 640 threads) still fit
// beside it on every SM and communication runs while it spins, as it would beside a real
// layer's kernels; the spinning warps compete with NCCL's for issue slots on all SMs, which
// is the contention a training step's compute brings. A full-occupancy grid would instead
// starve NCCL of SM slots until it ended and show no overlap at all.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace commbench::nccl {

constexpr int kSpinThreadsPerBlock = 128;

// Launches the spin kernel with one block per SM; check cudaGetLastError afterwards.
void launch_spin(std::uint64_t nanoseconds, int multiprocessors, cudaStream_t stream);

}  // namespace commbench::nccl
