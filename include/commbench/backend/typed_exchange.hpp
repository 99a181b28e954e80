// Values between ranks in one encoding, sent as CBOR: built-in types, strings, vectors,
// optionals, structs with a `fields` visitor (below), and whatever else nlohmann's JSON
// converts (containers, structs with to_json/from_json). CBOR keeps every double bit for
// bit, so no message needs a text format of its own.
//
// A struct's visitor names each member once, for writing and reading alike, as
// topology/topology_fields.hpp's do. It is found by argument-dependent lookup, so it is
// declared in the struct's own namespace (the unnamed one for a struct of one file):
//   template <typename Self, typename Visit>
//   requires std::same_as<std::remove_const_t<Self>, Thing>
//   void fields(Self& thing, Visit& v) { v("name", thing.name); v("count", thing.count); }
// `v.derived(name, make)` (a value readers of a file see, computed from the others) is
// not sent: the receiver computes it again.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "commbench/backend/bootstrap.hpp"
#include "commbench/core/error.hpp"

namespace commbench {
namespace exchange_detail {

template <typename T>
constexpr bool is_optional = false;
template <typename T>
constexpr bool is_optional<std::optional<T>> = true;
template <typename T>
constexpr bool is_vector = false;
template <typename T>
constexpr bool is_vector<std::vector<T>> = true;

template <typename T>
nlohmann::json to_value(const T& value);
template <typename T>
void from_value(const nlohmann::json& in, T& value);

struct FieldWriter {
  nlohmann::json out = nlohmann::json::object();

  template <typename T>
  void operator()(const char* name, const T& member) {
    out[name] = to_value(member);
  }
  template <typename Make>
  void derived(const char*, Make) {}
};

struct FieldReader {
  const nlohmann::json* in = nullptr;

  template <typename T>
  void operator()(const char* name, T& member) {
    from_value(in->at(name), member);
  }
  template <typename Make>
  void derived(const char*, Make) {}
};

template <typename T>
nlohmann::json to_value(const T& value) {
  if constexpr (requires(FieldWriter & writer) { fields(value, writer); }) {
    FieldWriter writer;
    fields(value, writer);
    return std::move(writer.out);
  } else if constexpr (is_optional<T>) {
    return value ? to_value(*value) : nlohmann::json(nullptr);
  } else if constexpr (is_vector<T>) {
    nlohmann::json array = nlohmann::json::array();
    for (const auto& item : value) array.push_back(to_value(item));
    return array;
  } else {
    return value;
  }
}

template <typename T>
void from_value(const nlohmann::json& in, T& value) {
  if constexpr (requires(FieldReader & reader) { fields(value, reader); }) {
    FieldReader reader{&in};
    fields(value, reader);
  } else if constexpr (is_optional<T>) {
    value.reset();
    if (in.is_null()) return;
    typename T::value_type inner{};
    from_value(in, inner);
    value = std::move(inner);
  } else if constexpr (is_vector<T>) {
    value.clear();
    for (const nlohmann::json& item : in.get_ref<const nlohmann::json::array_t&>()) {
      typename T::value_type element{};
      from_value(item, element);
      value.push_back(std::move(element));
    }
  } else {
    value = in.get<T>();
  }
}

inline std::string encoded_bytes(const nlohmann::json& value) {
  const std::vector<std::uint8_t> bytes = nlohmann::json::to_cbor(value);
  return std::string(bytes.begin(), bytes.end());
}

template <typename T>
std::string encoded(const T& value) {
  return encoded_bytes(to_value(value));
}

template <typename T>
T decoded(const std::string& bytes) {
  // The bytes come from encoded() on another rank of the same build: a failure is a bug.
  try {
    T value{};
    from_value(nlohmann::json::from_cbor(bytes), value);
    return value;
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
