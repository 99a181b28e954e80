// Values between ranks in one encoding: any type nlohmann's JSON converts (built-in types,
// containers, and structs with to_json/from_json), sent as CBOR. CBOR keeps every double
// bit for bit, so no message needs a text format of its own.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "commbench/backend/bootstrap.hpp"
#include "commbench/core/error.hpp"

namespace commbench {
namespace exchange_detail {

inline std::string encoded(const nlohmann::json& value) {
  const std::vector<std::uint8_t> bytes = nlohmann::json::to_cbor(value);
  return std::string(bytes.begin(), bytes.end());
}

template <typename T>
T decoded(const std::string& bytes) {
  // The bytes come from encoded() on another rank of the same build: a failure is a bug.
  try {
    return nlohmann::json::from_cbor(bytes).get<T>();
  } catch (const nlohmann::json::exception& e) {
    throw BackendError(std::string("internal error: a value from another rank does not decode: ") + e.what());
  }
}

}  // namespace exchange_detail

// Every rank's `value`, indexed by rank, on every rank.
template <typename T>
std::vector<T> all_gather_as(Bootstrap& group, const T& value) {
  std::vector<T> values;
  for (const std::string& bytes : group.all_gather(exchange_detail::encoded(value)))
    values.push_back(exchange_detail::decoded<T>(bytes));
  return values;
}

// `root`'s `value` on every rank (the others' `value` is not read).
template <typename T>
T broadcast_as(Bootstrap& group, const T& value, int root) {
  const std::string bytes = group.rank() == root ? exchange_detail::encoded(value) : std::string();
  return exchange_detail::decoded<T>(group.broadcast(bytes, root));
}

}  // namespace commbench
