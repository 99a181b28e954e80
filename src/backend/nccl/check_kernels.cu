#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <type_traits>

#include "check_kernels.hpp"

namespace commbench::nccl {
namespace {

// Conversions through float for the types without native arithmetic in every
// architecture; identity for the rest.
template <typename T>
__device__ float to_float(T v) {
  return static_cast<float>(v);
}
template <>
__device__ float to_float<__half>(__half v) {
  return __half2float(v);
}
template <>
__device__ float to_float<__nv_bfloat16>(__nv_bfloat16 v) {
  return __bfloat162float(v);
}
template <>
__device__ float to_float<__nv_fp8_e4m3>(__nv_fp8_e4m3 v) {
  return static_cast<float>(v);
}
template <>
__device__ float to_float<__nv_fp8_e5m2>(__nv_fp8_e5m2 v) {
  return static_cast<float>(v);
}

template <typename T>
__device__ T from_float(float v) {
  return static_cast<T>(v);
}
template <>
__device__ __half from_float<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}
template <>
__device__ __nv_fp8_e4m3 from_float<__nv_fp8_e4m3>(float v) {
  return __nv_fp8_e4m3(v);
}
template <>
__device__ __nv_fp8_e5m2 from_float<__nv_fp8_e5m2>(float v) {
  return __nv_fp8_e5m2(v);
}

template <typename T>
constexpr bool is_narrow_float =
    std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16> || std::is_same_v<T, __nv_fp8_e4m3> ||
    std::is_same_v<T, __nv_fp8_e5m2>;

// Relative tolerance of one comparison. Integers and data movement are exact; sums in
// narrow floats round at every step, in an order (ring, tree) the checker cannot know.
template <typename T>
__device__ double tolerance(const CheckSpec& s) {
  const bool reduces_values =
      s.op == Collective::allreduce || s.op == Collective::reducescatter || s.op == Collective::reduce;
  if (!reduces_values || std::is_integral_v<T>) return 0.0;
  double epsilon = 0.0;  // float/double sums of small integers are exact ...
  if constexpr (std::is_same_v<T, __half>) epsilon = 1.0 / 1024;
  if constexpr (std::is_same_v<T, __nv_bfloat16>) epsilon = 1.0 / 128;
  if constexpr (std::is_same_v<T, __nv_fp8_e4m3>) epsilon = 1.0 / 8;
  if constexpr (std::is_same_v<T, __nv_fp8_e5m2>) epsilon = 1.0 / 4;
  if constexpr (std::is_same_v<T, float>) epsilon = 1e-6;  // ... but avg multiplies by 1/n
  if constexpr (std::is_same_v<T, double>) epsilon = 1e-14;
  return epsilon * (s.ranks + 1);
}

// The expectation of core/check_pattern.hpp, with narrow floats folded in float and
// rounded to T after every step, as a reduction in T does.
template <typename T>
__device__ double expected_as_double(const CheckSpec& s, std::uint64_t index) {
  if constexpr (!is_narrow_float<T>) {
    return static_cast<double>(expected_output<T>(s, index));
  } else {
    const bool reduces_values =
        s.op == Collective::allreduce || s.op == Collective::reducescatter || s.op == Collective::reduce;
    if (!reduces_values) return to_float(from_float<T>(static_cast<float>(expected_output<float>(s, index))));
    const std::uint64_t element = s.op == Collective::reducescatter ? s.rank * s.count + index : index;
    T acc = from_float<T>(static_cast<float>(input_value(s, 0, element)));
    for (int r = 1; r < s.ranks; ++r) {
      const float v = to_float(from_float<T>(static_cast<float>(input_value(s, r, element))));
      const float a = to_float(acc);
      float next = a + v;
      if (s.redop == ReduceOp::prod) next = a * v;
      if (s.redop == ReduceOp::min) next = v < a ? v : a;
      if (s.redop == ReduceOp::max) next = v > a ? v : a;
      acc = from_float<T>(next);
    }
    if (s.redop == ReduceOp::avg) acc = from_float<T>(to_float(acc) / static_cast<float>(s.ranks));
    return to_float(acc);
  }
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
      const double expected = expected_as_double<T>(spec, first_index + i);
      const double got = static_cast<double>(to_float(data[i]));
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
