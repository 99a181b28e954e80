#include "parsed_xml.hpp"

#include <algorithm>

namespace commbench::xml {

ParsedXml::ParsedXml(std::string_view text) : text_(text) {
  for (std::size_t i = 0; i < text_.size(); ++i) {
    if (text_[i] == '\n' || (text_[i] == '\r' && (i + 1 >= text_.size() || text_[i + 1] != '\n')))
      line_starts_.push_back(i + 1);
  }
  // Parsed in place so every name and value pugixml returns points into buffer_, which
  // gives attributes (which have no offset_debug()) their position. The final NUL is the
  // terminator pugixml stops at.
  buffer_.assign(text_.begin(), text_.end());
  buffer_.push_back('\0');
  result_ = document_.load_buffer_inplace(buffer_.data(), buffer_.size(), kParseOptions, pugi::encoding_utf8);
}

int ParsedXml::line_at(std::size_t offset) const {
  return static_cast<int>(std::upper_bound(line_starts_.begin(), line_starts_.end(), offset) - line_starts_.begin());
}

int ParsedXml::line_in(std::size_t value_offset, std::string_view value, std::size_t index) const {
  return line_at(value_offset) +
         static_cast<int>(std::count(value.begin(), value.begin() + static_cast<std::ptrdiff_t>(index), '\n'));
}

std::size_t ParsedXml::offset_of(const char* in_buffer) const {
  return static_cast<std::size_t>(in_buffer - buffer_.data());
}

// offset_debug() is -1 only for a node without name or value in the buffer, which a parse
// does not produce; clamped all the same, so no check can index outside text().
std::size_t ParsedXml::offset_of(const pugi::xml_node& node) const {
  return std::min(static_cast<std::size_t>(node.offset_debug()), text_.size());
}

}  // namespace commbench::xml
