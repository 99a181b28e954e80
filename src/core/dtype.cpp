#include "commbench/core/dtype.hpp"

#include <array>

#include "commbench/core/name_lookup.hpp"

namespace commbench {
namespace {

constexpr std::array kAllTypes{DataType::int8,    DataType::uint8,   DataType::int32,       DataType::uint32,
                               DataType::int64,   DataType::uint64,  DataType::float16,     DataType::bfloat16,
                               DataType::float32, DataType::float64, DataType::float8_e4m3, DataType::float8_e5m2};

// The first name of each type is the one reports print (nccl-tests' spellings).
using Named = detail::NamedValue<DataType>;
constexpr std::array kNames{
    Named{"int8", DataType::int8},
    Named{"char", DataType::int8},
    Named{"uint8", DataType::uint8},
    Named{"int32", DataType::int32},
    Named{"int", DataType::int32},
    Named{"uint32", DataType::uint32},
    Named{"uint", DataType::uint32},
    Named{"int64", DataType::int64},
    Named{"uint64", DataType::uint64},
    Named{"half", DataType::float16},
    Named{"fp16", DataType::float16},
    Named{"float16", DataType::float16},
    Named{"bfloat16", DataType::bfloat16},
    Named{"bf16", DataType::bfloat16},
    Named{"float", DataType::float32},
    Named{"fp32", DataType::float32},
    Named{"float32", DataType::float32},
    Named{"double", DataType::float64},
    Named{"fp64", DataType::float64},
    Named{"float64", DataType::float64},
    Named{"f8e4m3", DataType::float8_e4m3},
    Named{"fp8_e4m3", DataType::float8_e4m3},
    Named{"float8_e4m3", DataType::float8_e4m3},
    Named{"f8e5m2", DataType::float8_e5m2},
    Named{"fp8_e5m2", DataType::float8_e5m2},
    Named{"float8_e5m2", DataType::float8_e5m2},
};

}  // namespace

std::span<const DataType> all_data_types() { return kAllTypes; }

std::size_t size_of(DataType type) {
  switch (type) {
    case DataType::int8:
    case DataType::uint8:
    case DataType::float8_e4m3:
    case DataType::float8_e5m2: return 1;
    case DataType::float16:
    case DataType::bfloat16: return 2;
    case DataType::int32:
    case DataType::uint32:
    case DataType::float32: return 4;
    case DataType::int64:
    case DataType::uint64:
    case DataType::float64: return 8;
  }
  return 1;
}

bool is_floating(DataType type) {
  return type == DataType::float16 || type == DataType::bfloat16 || type == DataType::float32 ||
         type == DataType::float64 || type == DataType::float8_e4m3 || type == DataType::float8_e5m2;
}

std::string_view name_of(DataType type) { return detail::name_in<DataType>(kNames, type); }

DataType parse_data_type(std::string_view text, std::string_view flag) {
  return detail::lookup_name<DataType>(kNames, text, flag, detail::canonical_names<DataType>(kAllTypes));
}

std::string accepted_data_type_names() { return detail::accepted_names<DataType>(kAllTypes, kNames); }

std::vector<DataType> parse_data_type_list(std::string_view text, std::string_view flag) {
  return detail::parse_list<DataType>(text, flag, kAllTypes, parse_data_type);
}

}  // namespace commbench
