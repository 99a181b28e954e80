#include "commbench/core/host_buffer_check.hpp"

#include <string>

#include "commbench/core/error.hpp"

namespace commbench {
namespace {

// Calls fn(T{}) with T the C++ type of `type`.
template <typename Fn>
auto with_host_type(DataType type, Fn&& fn) {
  switch (type) {
    case DataType::int8: return fn(std::int8_t{});
    case DataType::uint8: return fn(std::uint8_t{});
    case DataType::int32: return fn(std::int32_t{});
    case DataType::uint32: return fn(std::uint32_t{});
    case DataType::int64: return fn(std::int64_t{});
    case DataType::uint64: return fn(std::uint64_t{});
    case DataType::float32: return fn(float{});
    case DataType::float64: return fn(double{});
    case DataType::float16:
    case DataType::bfloat16:
    case DataType::float8_e4m3:
    case DataType::float8_e5m2: break;
  }
  throw UsageError("-d/--dtype: " + std::string(name_of(type)) + " has no host representation");
}

}  // namespace

void fill_host_input(DataType type, void* data, std::uint64_t elements, const CheckSpec& spec,
                     std::uint64_t first_index) {
  with_host_type(type, [&](auto zero) {
    using T = decltype(zero);
    T* out = static_cast<T*>(data);
    for (std::uint64_t i = 0; i < elements; ++i) out[i] = static_cast<T>(input_value(spec, spec.rank, first_index + i));
  });
}

std::uint64_t count_host_mismatches(DataType type, const void* data, std::uint64_t elements, const CheckSpec& spec,
                                    std::uint64_t first_index) {
  if (!output_is_defined(spec)) return 0;
  return with_host_type(type, [&](auto zero) {
    using T = decltype(zero);
    const T* in = static_cast<const T*>(data);
    std::uint64_t wrong = 0;
    for (std::uint64_t i = 0; i < elements; ++i) wrong += in[i] != expected_output<T>(spec, first_index + i) ? 1 : 0;
    return wrong;
  });
}

void corrupt_host_element(DataType type, void* data, std::uint64_t index) {
  with_host_type(type, [&](auto zero) {
    using T = decltype(zero);
    T* p = static_cast<T*>(data) + index;
    *p = static_cast<T>(*p + static_cast<T>(100));
  });
}

}  // namespace commbench
