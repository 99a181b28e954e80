// The values --check writes into inputs and expects in outputs. They are small integers,
// so every supported type (int8 through double, half and bfloat16 too) holds them and
// every reduction of them exactly; integer sums that exceed a type wrap the same way in
// the expectation as in the reduction. The GPU kernels implement the same formulas.
#pragma once

#include <cstdint>
#include <type_traits>

#if defined(__CUDACC__)
#define COMMBENCH_HOST_DEVICE __host__ __device__
#else
#define COMMBENCH_HOST_DEVICE
#endif

#include "commbench/core/check_rule.hpp"
#include "commbench/core/reduce_op.hpp"

namespace commbench {

// Built from a case by check_spec_for() (check_layout.hpp), which takes the rule from the
// collective's descriptor.
struct CheckSpec {
  CheckRule rule = CheckRule::reduced_everywhere;
  ReduceOp redop = ReduceOp::none;
  int root = 0;
  int rank = 0;
  int ranks = 1;
  std::uint64_t count = 0;  // BufferShape::count: elements per chunk
  // 8-bit floats hold few integers exactly (e5m2: up to 8): use 0/1 for reductions and
  // 0..7 for data movement so every value and every partial sum stays exact.
  bool narrow = false;
  // from_one_source: the rank whose input the checked piece of the output holds.
  int source = 0;
};

COMMBENCH_HOST_DEVICE inline bool reduces_values(CheckRule rule) {
  return rule == CheckRule::reduced_everywhere || rule == CheckRule::reduced_at_root ||
         rule == CheckRule::reduced_own_chunk;
}

// Which element of the reduction element `index` of the output holds.
COMMBENCH_HOST_DEVICE inline std::uint64_t reduced_element(const CheckSpec& spec, std::uint64_t index) {
  return spec.rule == CheckRule::reduced_own_chunk ? static_cast<std::uint64_t>(spec.rank) * spec.count + index : index;
}

// Element `index` of the send buffer of `rank` (index spans all chunks).
COMMBENCH_HOST_DEVICE inline std::int64_t input_value(const CheckSpec& spec, int rank, std::uint64_t index) {
  if (spec.redop == ReduceOp::prod) {
    // Exactly one rank contributes a 2 to every element, so products never overflow.
    return (index + static_cast<std::uint64_t>(rank)) % static_cast<std::uint64_t>(spec.ranks) == 0 ? 2 : 1;
  }
  const bool reducing = reduces_values(spec.rule);
  if (reducing && spec.narrow) return static_cast<std::int64_t>((static_cast<std::uint64_t>(rank) + index) % 2);
  if (reducing) return static_cast<std::int64_t>((3 * static_cast<std::uint64_t>(rank) + index) % 7);
  if (spec.narrow) return static_cast<std::int64_t>((5 * static_cast<std::uint64_t>(rank) + 3 * index) % 8);
  // Data movement: values that differ between neighbouring ranks and elements, so a
  // misplaced chunk is caught; below 127 so int8 holds them.
  return static_cast<std::int64_t>((131 * static_cast<std::uint64_t>(rank) + 7 * index) % 127);
}

// Reduction of element `index` over all ranks, evaluated in T as the collective does.
template <typename T>
COMMBENCH_HOST_DEVICE T reduced_value(const CheckSpec& spec, std::uint64_t index) {
  T acc = static_cast<T>(input_value(spec, 0, index));
  for (int r = 1; r < spec.ranks; ++r) {
    const T v = static_cast<T>(input_value(spec, r, index));
    switch (spec.redop) {
      case ReduceOp::prod: acc = static_cast<T>(acc * v); break;
      case ReduceOp::min: acc = v < acc ? v : acc; break;
      case ReduceOp::max: acc = v > acc ? v : acc; break;
      default: acc = static_cast<T>(acc + v); break;  // sum, avg
    }
  }
  if (spec.redop == ReduceOp::avg) {
    // Integers: the wrapped sum divided with truncation, as NCCL does; dividing in 64 bits
    // because T(ranks) itself wraps for 8-bit types at 128 or 256 ranks.
    if constexpr (std::is_floating_point_v<T>)
      acc = static_cast<T>(acc / static_cast<T>(spec.ranks));
    else if constexpr (std::is_signed_v<T>)
      acc = static_cast<T>(static_cast<std::int64_t>(acc) / static_cast<std::int64_t>(spec.ranks));
    else
      acc = static_cast<T>(static_cast<std::uint64_t>(acc) / static_cast<std::uint64_t>(spec.ranks));
  }
  return acc;
}

// Whether the output buffer of `s.rank` holds a defined result (reduce: only the root).
COMMBENCH_HOST_DEVICE inline bool output_is_defined(const CheckSpec& spec) {
  return spec.rule != CheckRule::reduced_at_root || spec.rank == spec.root;
}

// Element `index` of the output buffer of `s.rank` after the collective.
template <typename T>
COMMBENCH_HOST_DEVICE T expected_output(const CheckSpec& spec, std::uint64_t index) {
  const std::uint64_t n = static_cast<std::uint64_t>(spec.ranks);
  switch (spec.rule) {
    case CheckRule::reduced_everywhere:
    case CheckRule::reduced_at_root:
    case CheckRule::reduced_own_chunk: return reduced_value<T>(spec, reduced_element(spec, index));
    case CheckRule::gathered_chunks:
      return static_cast<T>(input_value(spec, static_cast<int>(index / spec.count), index % spec.count));
    case CheckRule::copied_from_root: return static_cast<T>(input_value(spec, spec.root, index));
    case CheckRule::exchanged_chunks: {
      const auto source = static_cast<int>(index / spec.count);
      return static_cast<T>(
          input_value(spec, source, static_cast<std::uint64_t>(spec.rank) * spec.count + index % spec.count));
    }
    case CheckRule::from_previous_rank:
      return static_cast<T>(
          input_value(spec, static_cast<int>((static_cast<std::uint64_t>(spec.rank) + n - 1) % n), index));
    case CheckRule::from_one_source: return static_cast<T>(input_value(spec, spec.source, index));
  }
  return T{};
}

}  // namespace commbench
