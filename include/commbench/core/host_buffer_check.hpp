// Filling and verifying host-memory buffers with the check pattern, for any element type
// a host backend supports (the 16-bit float types are not host types and are refused).
#pragma once

#include <cstdint>

#include "commbench/core/check_pattern.hpp"
#include "commbench/core/dtype.hpp"

namespace commbench {

// Writes input_value(spec, spec.rank, first_index + i) into elements [0, elements).
void fill_host_input(DataType type, void* data, std::uint64_t elements, const CheckSpec& spec,
                     std::uint64_t first_index = 0);

// Counts elements [0, elements) that differ from expected_output(spec, first_index + i).
std::uint64_t count_host_mismatches(DataType type, const void* data, std::uint64_t elements, const CheckSpec& spec,
                                    std::uint64_t first_index = 0);

// Flips one element so a test can prove that --check catches corruption.
void corrupt_host_element(DataType type, void* data, std::uint64_t index);

}  // namespace commbench
