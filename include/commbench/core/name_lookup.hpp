// Shared parsing of enum names and comma-separated lists ("a,b" or "all"), so every
// flag that takes a name reports unknown values the same way.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "commbench/core/error.hpp"

namespace commbench::detail {

std::string lower_case(std::string_view text);
std::vector<std::string> split_list(std::string_view text);

// The candidate nearest to `typed` by edit distance (case-insensitive), when it is near
// enough to be a typo of it (at most a third of its letters, and at least one, differ);
// empty otherwise. Ties go to the earlier candidate.
std::string nearest_name(std::string_view typed, std::span<const std::string_view> candidates);

// " (did you mean NAME?)" for nearest_name's answer, empty without one.
std::string did_you_mean(std::string_view typed, std::span<const std::string_view> candidates);

template <typename Enum>
struct NamedValue {
  std::string_view name;
  Enum value;
};

// The name of `value`: the first entry of `names` that holds it (later entries are other
// spellings a flag accepts), or `unnamed` for a value the table leaves out. One table
// names an enum's values both ways: this prints them, value_named and lookup_name read them.
template <typename Enum>
constexpr std::string_view name_in(std::span<const NamedValue<Enum>> names, Enum value,
                                   std::string_view unnamed = "?") {
  for (const auto& entry : names)
    if (entry.value == value) return entry.name;
  return unnamed;
}

// The value `text` names in `names`, compared as written; nullopt for none.
template <typename Enum>
constexpr std::optional<Enum> value_named(std::span<const NamedValue<Enum>> names, std::string_view text) {
  for (const auto& entry : names)
    if (entry.name == text) return entry.value;
  return std::nullopt;
}

// "table, csv, json": the names of a table of choices, as its help and errors list them.
template <typename Value>
std::string listed_names(std::span<const NamedValue<Value>> names) {
  std::string text;
  for (const auto& entry : names) text += (text.empty() ? "" : ", ") + std::string(entry.name);
  return text;
}

// "int8, uint8, ...": the name of each value of `every`, as errors list them. Built from
// the tables, so a new value shows up in every message and help text.
template <typename Enum>
std::string canonical_names(std::span<const Enum> every) {
  std::string text;
  for (const Enum value : every) text += (text.empty() ? "" : ", ") + std::string(name_of(value));
  return text;
}

// What a list flag accepts, for its help: the canonical names, then the other spellings
// `names` knows: "half, float, all (also: fp16, fp32)".
template <typename Enum>
std::string accepted_names(std::span<const Enum> every, std::span<const NamedValue<Enum>> names) {
  std::string aliases;
  for (const auto& entry : names) {
    if (entry.name != name_of(entry.value)) aliases += (aliases.empty() ? "" : ", ") + std::string(entry.name);
  }
  return canonical_names(every) + ", all" + (aliases.empty() ? "" : " (also: " + aliases + ")");
}

// Finds `text` (case-insensitive) among `names`; otherwise throws a UsageError such as
// "--dtype: unknown value 'flaot'; expected one of: int8, uint8, ...".
template <typename Enum>
Enum lookup_name(std::span<const NamedValue<Enum>> names, std::string_view text, std::string_view flag,
                 std::string_view canonical_list) {
  const std::string wanted = lower_case(text);
  if (const std::optional<Enum> value = value_named(names, wanted)) return *value;
  std::vector<std::string_view> candidates;
  for (const auto& entry : names) candidates.push_back(entry.name);
  throw UsageError(std::string(flag) + ": unknown value '" + std::string(text) + "'" +
                   did_you_mean(wanted, candidates) + "; expected one of: " + std::string(canonical_list));
}

// "all" expands to `every`; otherwise each comma-separated item is parsed, duplicates
// dropped. `parse_one` throws a UsageError ending in the names it expects.
template <typename Enum, typename Parse>
std::vector<Enum> parse_list(std::string_view text, std::string_view flag, std::span<const Enum> every,
                             Parse parse_one) {
  if (lower_case(text) == "all") return {every.begin(), every.end()};
  std::vector<Enum> values;
  const std::vector<std::string> items = split_list(text);
  for (const std::string& item : items) {
    if (item.empty()) throw UsageError(std::string(flag) + ": empty item in list '" + std::string(text) + "'");
    Enum value{};
    try {
      value = parse_one(item, flag);
    } catch (const UsageError& e) {
      // A flag of one name could also have been "all"; an item of a longer list could not.
      if (items.size() == 1) throw UsageError(std::string(e.what()) + ", all");
      throw;
    }
    bool seen = false;
    for (Enum v : values) seen = seen || v == value;
    if (!seen) values.push_back(value);
  }
  if (values.empty()) throw UsageError(std::string(flag) + ": empty list");
  return values;
}

}  // namespace commbench::detail
