// An optional value as JSON: null when it is absent. nlohmann/json 3.11 has no
// std::optional conversion of its own.
#pragma once

#include <optional>

#include <nlohmann/json.hpp>

namespace commbench {

template <typename Value>
nlohmann::ordered_json optional_json(const std::optional<Value>& value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
}

}  // namespace commbench
