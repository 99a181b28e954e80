// GPU versions of the check pattern (core/check_pattern.hpp): fill inputs and count
// wrong outputs on the device, so --check covers every element without copying
// buffers to the host. Internal to the NCCL backend.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "commbench/core/check_pattern.hpp"
#include "commbench/core/dtype.hpp"

namespace commbench::nccl {

void launch_fill(DataType type, void* data, std::uint64_t elements, const CheckSpec& spec, std::uint64_t first_index,
                 cudaStream_t stream);

// Adds the number of wrong elements in [0, elements) to *device_counter.
void launch_count_mismatches(DataType type, const void* data, std::uint64_t elements, const CheckSpec& spec,
                             std::uint64_t first_index, unsigned long long* device_counter, cudaStream_t stream);

void launch_corrupt(DataType type, void* data, std::uint64_t index, cudaStream_t stream);

}  // namespace commbench::nccl
