// Character data and attribute values as XML defines them. The reader asks pugixml not to
// decode references, because pugixml leaves unknown entities and invalid character
// references in place instead of refusing them; this decodes them with XML's rules.
// Internal to the topology library.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace commbench::xml {

struct TextError {
  std::size_t index;  // into the raw value
  std::string what;
};

enum class TextKind { character_data, attribute_value };

// Appends `raw` (line ends already normalised to "\n") to `out` with references decoded;
// an attribute value also gets XML's whitespace normalisation (tab and line feed become
// spaces, characters written as references are kept). Returns the first broken rule
// instead: an unknown entity, an invalid character reference, a bare '&', and in
// character data "]]>".
std::optional<TextError> append_decoded(std::string& out, std::string_view raw, TextKind kind);

}  // namespace commbench::xml
