#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <type_traits>

#include "check_kernels.hpp"

namespace commbench::nccl {
namespace {

// Conversions through float for the types without native arithmetic in every
// architecture; plain casts for the rest.
template <typename T>
__device__ float to_float(T v) {
  if constexpr (std::is_same_v<T, __half>)
    return __half2float(v);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __bfloat162float(v);
  else
    return static_cast<float>(v);  // integers, float, double, and the fp8 types' own operator
}

template <typename T>
__device__ T from_float(float v) {
  if constexpr (std::is_same_v<T, __half>)
    return __float2half_rn(v);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __float2bfloat16_rn(v);
  else if constexpr (std::is_same_v<T, __nv_fp8_e4m3> || std::is_same_v<T, __nv_fp8_e5m2>)
    return T(v);
  else
    return static_cast<T>(v);
}

template <typename T>
__device__ double to_double(T v) {
  if constexpr (std::is_same_v<T, double>) return v;  // never through float: avg would lose bits
  return static_cast<double>(to_float(v));
}

// Largest integer up to which every integer is exact in T.
template <typename T>
__device__ double exact_integer_limit() {
  if constexpr (std::is_same_v<T, __half>) return 2048;
  if constexpr (std::is_same_v<T, __nv_bfloat16>) return 256;
  if constexpr (std::is_same_v<T, __nv_fp8_e4m3>) return 16;
  if constexpr (std::is_same_v<T, __nv_fp8_e5m2>) return 8;
  if constexpr (std::is_same_v<T, float>) return 16777216.0;
  return 9007199254740992.0;
}

template <typename T>
__device__ double unit_roundoff() {
  if constexpr (std::is_same_v<T, __half>) return 1.0 / 1024;
  if constexpr (std::is_same_v<T, __nv_bfloat16>) return 1.0 / 128;
  if constexpr (std::is_same_v<T, __nv_fp8_e4m3>) return 1.0 / 8;
  if constexpr (std::is_same_v<T, __nv_fp8_e5m2>) return 1.0 / 4;
  if constexpr (std::is_same_v<T, float>) return 1.0 / 16777216.0;
  return 1.0 / 9007199254740992.0;
}

// Relative tolerance of one comparison. Zero whenever the arithmetic is exact: integers,
// data movement, min/max/prod, and sums whose largest partial sum is an integer T holds.
// Otherwise (avg, or sums past that limit) the result depends on the summation order
// (ring, tree), which the checker cannot know: allow one rounding per rank.
template <typename T>
__device__ double tolerance(const CheckSpec& s) {
  if constexpr (std::is_integral_v<T>) return 0.0;
  if (!reduces_values(s.rule) || s.redop == ReduceOp::min || s.redop == ReduceOp::max || s.redop == ReduceOp::prod)
    return 0.0;
  const double largest_partial_sum = (s.narrow ? 1.0 : 6.0) * s.ranks;
  if (s.redop == ReduceOp::sum && largest_partial_sum <= exact_integer_limit<T>()) return 0.0;
  return unit_roundoff<T>() * (s.ranks + 1);
}

// The expectation of core/check_pattern.hpp for floating types, folded in float (double
// for double) and rounded to T after every step as a reduction in T does. avg is
// modelled as NCCL computes it for floating types: every input premultiplied by T(1/n),
// then summed.
template <typename T>
__device__ double expected_floating(const CheckSpec& s, std::uint64_t index) {
  // Data movement copies bits: the expectation is the input value as T represents it.
  if (!reduces_values(s.rule)) return to_double(from_float<T>(static_cast<float>(expected_output<double>(s, index))));
  const std::uint64_t element = reduced_element(s, index);
  const bool average = s.redop == ReduceOp::avg;
  double scale = 1.0;
  if (average) scale = to_double(from_float<T>(static_cast<float>(1.0 / s.ranks)));
  if constexpr (std::is_same_v<T, double>) scale = average ? 1.0 / s.ranks : 1.0;
  auto term = [&](int r) {
    const double v = static_cast<double>(input_value(s, r, element)) * scale;
    if constexpr (std::is_same_v<T, double>) return v;
    return to_double(from_float<T>(static_cast<float>(v)));
  };
  double acc = term(0);
  for (int r = 1; r < s.ranks; ++r) {
    const double v = term(r);
    double next = acc + v;
    if (s.redop == ReduceOp::prod) next = acc * v;
    if (s.redop == ReduceOp::min) next = v < acc ? v : acc;
    if (s.redop == ReduceOp::max) next = v > acc ? v : acc;
    if constexpr (std::is_same_v<T, double>)
      acc = next;
    else
      acc = to_double(from_float<T>(static_cast<float>(next)));
  }
  return acc;
}

template <typename T>
__global__ void fill_kernel(T* data, std::uint64_t elements, CheckSpec spec, std::uint64_t first_index) {
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < elements;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    data[i] = from_float<T>(static_cast<float>(input_value(spec, spec.rank, first_index + i)));
  }
}

template <typename T>
__global__ void count_kernel(const T* data, std::uint64_t elements, CheckSpec spec, std::uint64_t first_index,
                             unsigned long long* counter) {
  unsigned long long wrong = 0;
  const double tol = tolerance<T>(spec);
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < elements;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    if constexpr (std::is_integral_v<T>) {
      if (data[i] != expected_output<T>(spec, first_index + i)) ++wrong;
    } else {
      const double expected = expected_floating<T>(spec, first_index + i);
      const double got = to_double(data[i]);
      const double magnitude = expected < 0 ? -expected : expected;
      const double diff = got > expected ? got - expected : expected - got;
      if (!(diff <= tol * (magnitude > 1.0 ? magnitude : 1.0))) ++wrong;  // NaN counts as wrong
    }
  }
  if (wrong != 0) atomicAdd(counter, wrong);
}

template <typename T>
__global__ void corrupt_kernel(T* data, std::uint64_t index) {
  data[index] = from_float<T>(to_float(data[index]) + 100.0f);
}

// Calls fn(T{}) with T the device type of `type`.
template <typename Fn>
void with_device_type(DataType type, Fn&& fn) {
  switch (type) {
    case DataType::int8: return fn(std::int8_t{});
    case DataType::uint8: return fn(std::uint8_t{});
    case DataType::int32: return fn(std::int32_t{});
    case DataType::uint32: return fn(std::uint32_t{});
    case DataType::int64: return fn(static_cast<long long>(0));
    case DataType::uint64: return fn(static_cast<unsigned long long>(0));
    case DataType::float16: return fn(__half{});
    case DataType::bfloat16: return fn(__nv_bfloat16{});
    case DataType::float32: return fn(float{});
    case DataType::float64: return fn(double{});
    case DataType::float8_e4m3: return fn(__nv_fp8_e4m3{});
    case DataType::float8_e5m2: return fn(__nv_fp8_e5m2{});
  }
}

constexpr unsigned kThreads = 256;

unsigned blocks_for(std::uint64_t elements) {
  const std::uint64_t wanted = (elements + kThreads - 1) / kThreads;
  return static_cast<unsigned>(wanted < 4096 ? (wanted == 0 ? 1 : wanted) : 4096);
}

}  // namespace

void launch_fill(DataType type, void* data, std::uint64_t elements, const CheckSpec& spec, std::uint64_t first_index,
                 cudaStream_t stream) {
  with_device_type(type, [&](auto zero) {
    using T = decltype(zero);
    fill_kernel<T><<<blocks_for(elements), kThreads, 0, stream>>>(static_cast<T*>(data), elements, spec, first_index);
  });
}

void launch_count_mismatches(DataType type, const void* data, std::uint64_t elements, const CheckSpec& spec,
                             std::uint64_t first_index, unsigned long long* device_counter, cudaStream_t stream) {
  with_device_type(type, [&](auto zero) {
    using T = decltype(zero);
    count_kernel<T><<<blocks_for(elements), kThreads, 0, stream>>>(static_cast<const T*>(data), elements, spec,
                                                                   first_index, device_counter);
  });
}

void launch_corrupt(DataType type, void* data, std::uint64_t index, cudaStream_t stream) {
  with_device_type(type, [&](auto zero) {
    using T = decltype(zero);
    corrupt_kernel<T><<<1, 1, 0, stream>>>(static_cast<T*>(data), index);
  });
}

}  // namespace commbench::nccl
