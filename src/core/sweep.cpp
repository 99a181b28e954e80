#include "commbench/core/sweep.hpp"

#include <cmath>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "commbench/core/error.hpp"
#include "commbench/core/size.hpp"

namespace commbench {
namespace {

// Next size after `size`, or 0 when the step would overflow 64 bits.
std::uint64_t next_size(const SweepSpec& spec, std::uint64_t size) {
  constexpr auto kMax = std::numeric_limits<std::uint64_t>::max();
  if (spec.step_bytes != 0) return size > kMax - spec.step_bytes ? 0 : size + spec.step_bytes;
  const long double grown = std::floor(static_cast<long double>(size) * spec.step_factor);
  if (grown >= static_cast<long double>(kMax)) return 0;
  const auto next = static_cast<std::uint64_t>(grown);
  return next > size ? next : size + 1;
}

}  // namespace

void validate(const SweepSpec& spec) {
  if (spec.min_bytes > spec.max_bytes)
    throw UsageError("-b/--min-bytes: " + format_size(spec.min_bytes) + " is larger than -e/--max-bytes " +
                     format_size(spec.max_bytes));
  if (spec.step_bytes == 0 && !(spec.step_factor > 1.0))
    throw UsageError(fmt::format("-f/--step-factor: must be greater than 1 (got {:f})", spec.step_factor));
  std::size_t count = 0;
  for (std::uint64_t s = spec.min_bytes; s != 0 && s <= spec.max_bytes; s = next_size(spec, s)) {
    if (++count > kMaxSweepSizes)
      throw UsageError(fmt::format("{}: the sweep would visit more than {} sizes",
                                   spec.step_bytes ? "-i/--step-bytes" : "-f/--step-factor", kMaxSweepSizes));
  }
}

std::vector<std::uint64_t> sweep_sizes(const SweepSpec& spec) {
  validate(spec);
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t s = spec.min_bytes; s != 0 && s <= spec.max_bytes; s = next_size(spec, s)) sizes.push_back(s);
  return sizes;
}

}  // namespace commbench
