// Element types of the buffers a collective moves, named as nccl-tests names them.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace commbench {

enum class DataType {
  int8,
  uint8,
  int32,
  uint32,
  int64,
  uint64,
  float16,
  bfloat16,
  float32,
  float64,
  float8_e4m3,
  float8_e5m2,  // NCCL >= 2.24 on sm_90 and newer
};

std::span<const DataType> all_data_types();
std::size_t size_of(DataType type);
bool is_floating(DataType type);
// "int8", "uint8", ..., "half", "bfloat16", "float", "double", "f8e4m3", "f8e5m2"
// (nccl-tests spelling).
std::string_view name_of(DataType type);
// Accepts the names above plus common aliases (fp16, bf16, fp32, float32, fp64, float64,
// char, int, uint). Throws UsageError naming `flag` when unknown.
DataType parse_data_type(std::string_view text, std::string_view flag);
// Every spelling parse_data_type_list accepts, for help texts: "int8, ..., all (also: ...)".
std::string accepted_data_type_names();
// A comma-separated list or "all" (every type; the caller filters by backend support).
std::vector<DataType> parse_data_type_list(std::string_view text, std::string_view flag);

}  // namespace commbench
