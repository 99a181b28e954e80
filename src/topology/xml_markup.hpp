// XML's character classes, and how the reader's messages quote what they found: shared by
// the reader (xml_document.cpp), its text decoder (xml_text.cpp) and its explanation of
// pugixml's failures (xml_parse_failure.cpp). Internal to the topology library.
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>

#include "commbench/core/error.hpp"

namespace commbench::xml {

inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Bytes >= 0x80 are parts of UTF-8 sequences: letters of other scripts are letters.
inline bool is_name_char(char c) {
  const auto byte = static_cast<unsigned char>(c);
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == ':' ||
         c == '-' || c == '.' || byte >= 0x80;
}

// "<name>", with a long name cut short. Appended piece by piece: GCC 12 misreports
// `"<" + string` as an overlapping copy.
inline std::string tag_of(std::string_view name) {
  std::string tag(1, '<');
  tag += excerpt(name);
  tag += '>';
  return tag;
}

// "'x'" for a printable character, "byte 0x01" for anything else.
inline std::string describe_char(char c) {
  const auto byte = static_cast<unsigned char>(c);
  if (byte < 0x20 || byte >= 0x7f) return fmt::format("byte 0x{:02x}", byte);
  return std::string("'") + c + "'";
}

}  // namespace commbench::xml
