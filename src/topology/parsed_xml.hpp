// A text as pugixml parsed it for the XML reader, with the positions the reader's checks
// and messages need. Internal to the topology library.
#pragma once

#include <pugixml.hpp>

#include <cstddef>
#include <string_view>
#include <vector>

namespace commbench::xml {

// Every construct becomes a node so the reader's checks can see it: parse_fragment keeps
// text, CDATA and further elements at the top level (a document parse drops top-level
// text silently). References are not decoded (xml_text.hpp says why). pugixml normalises
// line ends, but not attribute whitespace (parse_wconv_attribute), because that would
// turn the line ends counted for the line of a bad reference into spaces.
inline constexpr unsigned kParseOptions = pugi::parse_fragment | pugi::parse_cdata | pugi::parse_eol |
                                          pugi::parse_ws_pcdata | pugi::parse_comments | pugi::parse_pi |
                                          pugi::parse_declaration | pugi::parse_doctype;

class ParsedXml {
 public:
  // Parses `text`, which must outlive this. pugixml stops at a NUL byte, as at the end;
  // the reader refuses NULs before it looks at the parse. A failed parse keeps what
  // pugixml built before it stopped.
  explicit ParsedXml(std::string_view text);
  ParsedXml(const ParsedXml&) = delete;
  ParsedXml& operator=(const ParsedXml&) = delete;

  std::string_view text() const { return text_; }
  const pugi::xml_document& document() const { return document_; }
  const pugi::xml_parse_result& result() const { return result_; }

  // 1-based; "\r\n" and a lone "\r" both end a line, as XML's line-end normalisation says.
  int line_at(std::size_t offset) const;
  // Values are line-end normalised in place, so a position inside one is its start's
  // line plus the line feeds before it.
  int line_in(std::size_t value_offset, std::string_view value, std::size_t index) const;
  // Offsets into text(): of a name or value pugixml returned (parsed in place, they
  // point into the buffer), and of a node's name or value (offset_debug()).
  std::size_t offset_of(const char* in_buffer) const;
  std::size_t offset_of(const pugi::xml_node& node) const;

 private:
  std::string_view text_;
  std::vector<std::size_t> line_starts_{0};
  std::vector<char> buffer_;
  pugi::xml_document document_;
  pugi::xml_parse_result result_;
};

}  // namespace commbench::xml
