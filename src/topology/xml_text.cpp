#include "xml_text.hpp"

#include <cstdint>

#include "commbench/core/error.hpp"
#include "xml_markup.hpp"

namespace commbench::xml {
namespace {

void append_utf8(std::string& out, std::uint32_t code) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xc0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3f));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xe0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (code & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (code >> 18));
    out += static_cast<char>(0x80 | ((code >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (code & 0x3f));
  }
}

// XML 1.0 "Char": what a character reference may name.
bool is_xml_char(std::uint32_t code) {
  return code == 0x9 || code == 0xa || code == 0xd || (code >= 0x20 && code <= 0xd7ff) ||
         (code >= 0xe000 && code <= 0xfffd) || (code >= 0x10000 && code <= 0x10ffff);
}

// The code point of a character reference's name ("#65", "#x41"), or nothing when it is
// malformed or names no XML character.
std::optional<std::uint32_t> character_code(std::string_view name) {
  const bool hex = name.size() > 1 && name[1] == 'x';
  const std::string_view digits = name.substr(hex ? 2 : 1);
  if (digits.empty()) return std::nullopt;
  std::uint32_t code = 0;
  for (const char d : digits) {
    int value = -1;
    if (d >= '0' && d <= '9')
      value = d - '0';
    else if (hex && d >= 'a' && d <= 'f')
      value = d - 'a' + 10;
    else if (hex && d >= 'A' && d <= 'F')
      value = d - 'A' + 10;
    if (value < 0) return std::nullopt;
    code = code * (hex ? 16 : 10) + static_cast<std::uint32_t>(value);
    if (code > 0x10ffff) return std::nullopt;  // stop before the arithmetic can wrap around
  }
  if (!is_xml_char(code)) return std::nullopt;
  return code;
}

// Decodes the reference starting at raw[amp] == '&' onto `out`; returns the index of its
// ';', or the error.
struct Reference {
  std::size_t semicolon = 0;
  std::optional<TextError> error;
};

Reference decode_reference(std::string& out, std::string_view raw, std::size_t amp) {
  // Known references are short; looking further than this for the ';' would let a
  // long run of text after a stray '&' be scanned again for every '&' in it.
  constexpr std::size_t kLongestReference = 32;
  const auto refuse = [&](std::string what) { return Reference{amp, TextError{amp, std::move(what)}}; };
  std::size_t semicolon = amp + 1;
  while (semicolon < raw.size() && semicolon - amp <= kLongestReference && raw[semicolon] != ';' &&
         (is_name_char(raw[semicolon]) || raw[semicolon] == '#'))
    ++semicolon;
  if (semicolon >= raw.size() || raw[semicolon] != ';' || semicolon == amp + 1)
    return refuse("'&' not followed by an entity or character reference (write &amp; for '&')");
  const std::string_view name = raw.substr(amp + 1, semicolon - amp - 1);
  if (name[0] == '#') {
    const std::optional<std::uint32_t> code = character_code(name);
    if (!code) return refuse("invalid character reference &" + excerpt(name) + ";");
    append_utf8(out, *code);
  } else if (name == "lt") {
    out += '<';
  } else if (name == "gt") {
    out += '>';
  } else if (name == "amp") {
    out += '&';
  } else if (name == "quot") {
    out += '"';
  } else if (name == "apos") {
    out += '\'';
  } else {
    return refuse("unknown entity &" + excerpt(name) + ";");
  }
  return Reference{semicolon, std::nullopt};
}

}  // namespace

std::optional<TextError> append_decoded(std::string& out, std::string_view raw, TextKind kind) {
  const bool attribute = kind == TextKind::attribute_value;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const char c = raw[i];
    if (c == '&') {
      Reference reference = decode_reference(out, raw, i);
      if (reference.error) return reference.error;
      i = reference.semicolon;
    } else if (attribute && (c == '\n' || c == '\t')) {
      out += ' ';
    } else {
      if (!attribute && c == ']' && raw.substr(i, 3) == "]]>") return TextError{i, "']]>' in text (write ]]&gt;)"};
      out += c;
    }
  }
  return std::nullopt;
}

}  // namespace commbench::xml
