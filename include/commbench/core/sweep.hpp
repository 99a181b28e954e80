// The sizes a benchmark visits: geometric (-f) or linear (-i) between -b and -e.
#pragma once

#include <cstdint>
#include <vector>

namespace commbench {

struct SweepSpec {
  std::uint64_t min_bytes = 8;
  std::uint64_t max_bytes = 64ull << 20;
  double step_factor = 2.0;      // used when step_bytes == 0
  std::uint64_t step_bytes = 0;  // linear steps when non-zero
};

// The most sizes one sweep may visit; a larger request is almost always a typo
// (-i 1 with -e 1G) and would run for days.
inline constexpr std::size_t kMaxSweepSizes = 100000;

// Throws UsageError naming the offending flag: min > max, step factor <= 1, too many sizes.
void validate(const SweepSpec& spec);

// min, min*f, min*f^2, ... (or min, min+i, ...) up to and including max. Each step grows
// by at least one byte so fractional factors always make progress.
std::vector<std::uint64_t> sweep_sizes(const SweepSpec& spec);

}  // namespace commbench
