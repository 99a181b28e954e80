#include "commbench/topology/xml_document.hpp"


#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <unordered_set>

#include "commbench/core/error.hpp"
#include "commbench/core/input_file.hpp"

namespace commbench {

const std::string* XmlElement::attribute(std::string_view wanted) const {
  for (const auto& [key, value] : attributes)
    if (key == wanted) return &value;
  return nullptr;
}

namespace {

constexpr std::size_t kMaxDepth = 256;
// Beyond this many attributes on one tag the duplicate check switches to a hash set, so a
// tag with a million attributes stays linear.
constexpr std::size_t kLinearDuplicateScan = 16;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

bool is_name_start(char c) {
  const auto byte = static_cast<unsigned char>(c);
  // Bytes >= 0x80 are parts of UTF-8 sequences: letters of other scripts are letters.
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' || byte >= 0x80;
}

bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9') || c == '-' || c == '.'; }

std::string shown(std::string_view text) { return excerpt(text); }

std::string describe_char(char c) {
  const auto byte = static_cast<unsigned char>(c);
  if (byte < 0x20 || byte >= 0x7f) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", byte);
    return std::string("byte ") + hex;
  }
  return std::string("'") + c + "'";
}

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

class Parser {
 public:
  Parser(std::string_view text, const std::string& where) : text_(text), where_(where) {}

  XmlElement parse() {
    check_characters();
    if (text_.substr(0, 3) == "\xef\xbb\xbf") pos_ = 3;  // UTF-8 byte order mark
    if (looking_at("<?xml") && pos_ + 5 < text_.size() && (is_space(text_[pos_ + 5]) || text_[pos_ + 5] == '?'))
      skip_until("?>", pos_, "the <?xml ...?> declaration");

    std::vector<XmlElement> open;  // the elements whose end tag is still to come
    std::optional<XmlElement> root;
    int root_end_line = 0;
    bool seen_doctype = false;

    while (pos_ < text_.size()) {
      if (text_[pos_] != '<') {
        const std::size_t end = std::min(text_.find('<', pos_), text_.size());
        if (open.empty()) {
          expect_only_space(pos_, end, root.has_value());
        } else {
          decode(open.back().text, pos_, end, false);
        }
        pos_ = end;
      } else if (looking_at("<!--")) {
        skip_comment();
      } else if (looking_at("<![CDATA[")) {
        if (open.empty()) fail(pos_, "CDATA section outside the root element");
        const std::size_t start = pos_;
        const std::size_t end = text_.find("]]>", pos_ + 9);
        if (end == std::string_view::npos) fail_eof("inside a CDATA section (opened at line " + line_of(start) + ")");
        append_normalised(open.back().text, pos_ + 9, end);
        pos_ = end + 3;
      } else if (looking_at("<!DOCTYPE")) {
        if (root || !open.empty()) fail(pos_, "<!DOCTYPE> after the start of the root element");
        if (seen_doctype) fail(pos_, "second <!DOCTYPE>");
        seen_doctype = true;
        skip_doctype();
      } else if (looking_at("<!")) {
        fail(pos_, "unknown markup '<!' (expected a comment, CDATA section or DOCTYPE)");
      } else if (looking_at("<?")) {
        skip_processing_instruction();
      } else if (looking_at("</")) {
        const std::size_t start = pos_;
        pos_ += 2;
        const std::string name = parse_name("end tag name");
        skip_spaces();
        if (pos_ >= text_.size()) fail_eof("in the end tag </" + shown(name) + ">");
        if (text_[pos_] != '>') fail(pos_, "unexpected " + describe_char(text_[pos_]) + " in the end tag </" + shown(name) + ">");
        ++pos_;
        if (open.empty()) fail(start, "</" + shown(name) + "> has no matching start tag");
        if (open.back().name != name)
          fail(start, "</" + shown(name) + "> closes <" + shown(open.back().name) + "> opened at line " +
                          std::to_string(open.back().line));
        XmlElement done = std::move(open.back());
        open.pop_back();
        if (open.empty()) {
          root_end_line = line_at(start);
          root = std::move(done);
        } else {
          open.back().children.push_back(std::move(done));
        }
      } else {
        const std::size_t start = pos_;
        bool self_closing = false;
        XmlElement element = parse_start_tag(self_closing);
        if (root)
          fail(start, "second root element <" + shown(element.name) + "> after the root <" + shown(root->name) +
                          "> ended at line " + std::to_string(root_end_line));
        if (open.size() + 1 > kMaxDepth)
          fail(start, "elements nested deeper than " + std::to_string(kMaxDepth) + " levels");
        if (!self_closing) {
          open.push_back(std::move(element));
        } else if (open.empty()) {
          root_end_line = element.line;
          root = std::move(element);
        } else {
          open.back().children.push_back(std::move(element));
        }
      }
    }
    if (!open.empty())
      fail_eof("inside <" + shown(open.back().name) + "> (opened at line " + std::to_string(open.back().line) + ")");
    if (!root) fail(text_.size(), "no root element");
    return std::move(*root);
  }

 private:
  std::string_view text_;
  const std::string& where_;
  std::size_t pos_ = 0;
  // Line numbers are counted incrementally: every start tag asks for its line, and a
  // recount from the top each time would make large documents quadratic.
  std::size_t counted_to_ = 0;
  int counted_line_ = 1;

  int line_at(std::size_t pos) {
    pos = std::min(pos, text_.size());
    if (pos < counted_to_) {
      counted_to_ = 0;
      counted_line_ = 1;
    }
    for (std::size_t i = counted_to_; i < pos; ++i) {
      // "\r\n" and a lone "\r" both end a line, as XML's line-end normalisation says.
      if (text_[i] == '\n' || (text_[i] == '\r' && (i + 1 >= text_.size() || text_[i + 1] != '\n'))) ++counted_line_;
    }
    counted_to_ = pos;
    return counted_line_;
  }

  std::string line_of(std::size_t pos) { return std::to_string(line_at(pos)); }

  [[noreturn]] void fail(std::size_t pos, const std::string& what) {
    throw UsageError(where_ + ":" + line_of(pos) + ": " + what);
  }
  [[noreturn]] void fail_eof(const std::string& where_in_document) {
    fail(text_.size(), "unexpected end of file " + where_in_document);
  }

  bool looking_at(std::string_view token) const { return text_.substr(pos_, token.size()) == token; }

  bool skip_spaces() {
    const std::size_t before = pos_;
    while (pos_ < text_.size() && is_space(text_[pos_])) ++pos_;
    return pos_ != before;
  }

  // Moves past the next `terminator`; `what` names the construct for the end-of-file error.
  void skip_until(std::string_view terminator, std::size_t start, const std::string& what) {
    const std::size_t end = text_.find(terminator, pos_);
    if (end == std::string_view::npos) fail_eof("inside " + what + " (opened at line " + line_of(start) + ")");
    pos_ = end + terminator.size();
  }

  // XML forbids control characters other than tab, line feed and carriage return, even
  // as references; checking the whole input first keeps the rest of the parser simple.
  void check_characters() {
    for (std::size_t i = 0; i < text_.size(); ++i) {
      const auto byte = static_cast<unsigned char>(text_[i]);
      if (byte >= 0x20 || byte == '\t' || byte == '\n' || byte == '\r') continue;
      if (byte == 0) fail(i, "NUL byte (not a text file?)");
      fail(i, "control character " + describe_char(text_[i]) + " (not allowed in XML)");
    }
  }

  void expect_only_space(std::size_t begin, std::size_t end, bool after_root) {
    for (std::size_t i = begin; i < end; ++i) {
      if (is_space(text_[i])) continue;
      fail(i, after_root ? "text after the end of the root element" : "text before the root element");
    }
  }

  std::string parse_name(const std::string& what) {
    if (pos_ >= text_.size()) fail_eof("where " + what + " was expected");
    if (!is_name_start(text_[pos_]))
      fail(pos_, what + " must start with a letter, '_' or ':' (found " + describe_char(text_[pos_]) + ")");
    const std::size_t start = pos_;
    while (pos_ < text_.size() && is_name_char(text_[pos_])) ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }

  void skip_comment() {
    const std::size_t start = pos_;
    const std::size_t end = text_.find("--", pos_ + 4);
    if (end == std::string_view::npos) fail_eof("inside a comment (opened at line " + line_of(start) + ")");
    // The XML grammar allows "--" only as part of the closing "-->".
    if (end + 2 >= text_.size()) fail_eof("inside a comment (opened at line " + line_of(start) + ")");
    if (text_[end + 2] != '>') fail(end, "'--' inside a comment (opened at line " + line_of(start) + ")");
    pos_ = end + 3;
  }

  void skip_processing_instruction() {
    const std::size_t start = pos_;
    pos_ += 2;
    const std::string target = parse_name("processing instruction target");
    std::string lower = target;
    for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    if (lower == "xml") fail(start, "<?xml ...?> declaration is only allowed at the very start of the document");
    if (pos_ < text_.size() && !is_space(text_[pos_]) && !looking_at("?>"))
      fail(pos_, "unexpected " + describe_char(text_[pos_]) + " after processing instruction target " + shown(target));
    skip_until("?>", start, "a processing instruction");
  }

  // Skips the DOCTYPE and its internal subset without interpreting them. Quoted literals
  // and comments may contain '>' and ']', so those are stepped over as units.
  void skip_doctype() {
    const std::size_t start = pos_;
    pos_ += 9;
    if (pos_ < text_.size() && !is_space(text_[pos_])) fail(pos_, "expected whitespace after <!DOCTYPE");
    const std::string what = "<!DOCTYPE> (opened at line " + line_of(start) + ")";
    int brackets = 0;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (brackets > 0 && looking_at("<!--")) {
        skip_comment();
      } else if (brackets > 0 && looking_at("<?")) {
        skip_until("?>", pos_, "a processing instruction");
      } else if (c == '"' || c == '\'') {
        const std::size_t end = text_.find(c, pos_ + 1);
        if (end == std::string_view::npos) fail_eof("inside a quoted literal in " + what);
        pos_ = end + 1;
      } else if (c == '[') {
        ++brackets;
        ++pos_;
      } else if (c == ']') {
        if (brackets == 0) fail(pos_, "unexpected ']' in <!DOCTYPE>");
        --brackets;
        ++pos_;
      } else if (c == '>' && brackets == 0) {
        ++pos_;
        return;
      } else {
        ++pos_;
      }
    }
    fail_eof("inside " + what);
  }

  XmlElement parse_start_tag(bool& self_closing) {
    const std::size_t start = pos_;
    ++pos_;
    XmlElement element;
    element.name = parse_name("element name");
    element.line = line_at(start);
    // Appended piece by piece: GCC 12 misreports `"<" + string` as an overlapping copy.
    std::string tag(1, '<');
    tag += shown(element.name);
    tag += '>';
    std::unordered_set<std::string> seen;  // used only once a tag has many attributes
    while (true) {
      const bool had_space = skip_spaces();
      if (pos_ >= text_.size()) fail_eof("in the start tag of " + tag);
      const char c = text_[pos_];
      if (c == '>') {
        ++pos_;
        self_closing = false;
        return element;
      }
      if (c == '/') {
        if (pos_ + 1 >= text_.size()) fail_eof("in the start tag of " + tag);
        if (text_[pos_ + 1] != '>') fail(pos_, "expected '>' after '/' in the start tag of " + tag);
        pos_ += 2;
        self_closing = true;
        return element;
      }
      if (!is_name_start(c)) fail(pos_, "unexpected " + describe_char(c) + " in the start tag of " + tag);
      if (!had_space) fail(pos_, "missing whitespace before attribute in the start tag of " + tag);
      std::string name = parse_name("attribute name");
      const std::string attribute = "attribute " + shown(name) + " of " + tag;
      skip_spaces();
      if (pos_ >= text_.size()) fail_eof("in the start tag of " + tag);
      if (text_[pos_] != '=') fail(pos_, attribute + " has no value (expected '=')");
      ++pos_;
      skip_spaces();
      if (pos_ >= text_.size()) fail_eof("in the start tag of " + tag);
      const char quote = text_[pos_];
      if (quote != '"' && quote != '\'') fail(pos_, "value of " + attribute + " must be quoted");
      const std::size_t end = text_.find(quote, pos_ + 1);
      if (end == std::string_view::npos) fail_eof("in the value of " + attribute);
      const std::size_t less = text_.substr(pos_ + 1, end - pos_ - 1).find('<');
      if (less != std::string_view::npos) fail(pos_ + 1 + less, "'<' in the value of " + attribute);

      bool duplicate = false;
      if (element.attributes.size() < kLinearDuplicateScan) {
        duplicate = element.attribute(name) != nullptr;
      } else {
        if (seen.empty())
          for (const auto& existing : element.attributes) seen.insert(existing.first);
        duplicate = !seen.insert(name).second;
      }
      if (duplicate) fail(pos_, "duplicate " + attribute);

      std::string value;
      decode(value, pos_ + 1, end, true);
      pos_ = end + 1;
      element.attributes.emplace_back(std::move(name), std::move(value));
    }
  }

  // Copies [begin, end) with line ends normalised: "\r\n" and lone "\r" become "\n".
  void append_normalised(std::string& out, std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      if (text_[i] == '\r') {
        out += '\n';
        if (i + 1 < end && text_[i + 1] == '\n') ++i;
      } else {
        out += text_[i];
      }
    }
  }

  // Decodes character data or an attribute value in [begin, end) into `out`. Attribute
  // values also get XML's whitespace normalisation (tab and line ends become spaces);
  // characters written as references are kept as they are.
  void decode(std::string& out, std::size_t begin, std::size_t end, bool attribute) {
    for (std::size_t i = begin; i < end; ++i) {
      const char c = text_[i];
      if (c == '&') {
        i = decode_reference(out, i, end);
      } else if (c == '\r') {
        out += attribute ? ' ' : '\n';
        if (i + 1 < end && text_[i + 1] == '\n') ++i;
      } else if (attribute && (c == '\n' || c == '\t')) {
        out += ' ';
      } else {
        if (!attribute && c == ']' && text_.substr(i, 3) == "]]>") fail(i, "']]>' in text (write ]]&gt;)");
        out += c;
      }
    }
  }

  // Decodes the reference starting at text_[amp] == '&'; returns the index of its ';'.
  std::size_t decode_reference(std::string& out, std::size_t amp, std::size_t end) {
    // Known references are short; looking further than this for the ';' would let a
    // long run of text after a stray '&' be scanned again for every '&' in it.
    constexpr std::size_t kLongestReference = 32;
    std::size_t semicolon = amp + 1;
    while (semicolon < end && semicolon - amp <= kLongestReference && text_[semicolon] != ';' &&
           (is_name_char(text_[semicolon]) || text_[semicolon] == '#'))
      ++semicolon;
    if (semicolon >= end || text_[semicolon] != ';' || semicolon == amp + 1)
      fail(amp, "'&' not followed by an entity or character reference (write &amp; for '&')");
    const std::string_view name = text_.substr(amp + 1, semicolon - amp - 1);
    if (name[0] != '#') {
      if (name == "lt") out += '<';
      else if (name == "gt") out += '>';
      else if (name == "amp") out += '&';
      else if (name == "quot") out += '"';
      else if (name == "apos") out += '\'';
      else fail(amp, "unknown entity &" + shown(name) + ";");
      return semicolon;
    }
    const bool hex = name.size() > 1 && name[1] == 'x';
    const std::string_view digits = name.substr(hex ? 2 : 1);
    std::uint32_t code = 0;
    bool valid = !digits.empty();
    for (const char d : digits) {
      int value = -1;
      if (d >= '0' && d <= '9') value = d - '0';
      else if (hex && d >= 'a' && d <= 'f') value = d - 'a' + 10;
      else if (hex && d >= 'A' && d <= 'F') value = d - 'A' + 10;
      if (value < 0) {
        valid = false;
        break;
      }
      code = code * (hex ? 16 : 10) + static_cast<std::uint32_t>(value);
      if (code > 0x10ffff) {  // stop before the arithmetic can wrap around
        valid = false;
        break;
      }
    }
    if (!valid || !is_xml_char(code)) fail(amp, "invalid character reference &" + shown(name) + ";");
    append_utf8(out, code);
    return semicolon;
  }
};

}  // namespace

XmlElement parse_xml(std::string_view text, const std::string& where) { return Parser(text, where).parse(); }

XmlElement read_xml_file(const std::string& path) { return parse_xml(read_input_file(path, path), path); }

}  // namespace commbench
