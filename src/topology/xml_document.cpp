#include "commbench/topology/xml_document.hpp"

#include <pugixml.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
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

// Every construct becomes a node so the checks below can see it: parse_fragment keeps
// text, CDATA and further elements at the top level (a document parse drops top-level
// text silently and would hide it from the "text after the root" check). References are
// not decoded by pugixml, which leaves unknown entities and invalid character references
// in place; decode() does it with XML's rules. pugixml normalises line ends, but not
// attribute whitespace (parse_wconv_attribute), because that would turn the line ends
// decode() counts for the line of a bad reference into spaces.
constexpr unsigned kParseOptions = pugi::parse_fragment | pugi::parse_cdata | pugi::parse_eol | pugi::parse_ws_pcdata |
                                   pugi::parse_comments | pugi::parse_pi | pugi::parse_declaration |
                                   pugi::parse_doctype;

constexpr const char* kMalformedDeclaration =
    "malformed <?xml ...?> declaration (expected version=\"1.0\" and name=\"value\" pairs)";

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

bool is_name_char(char c) {
  const auto byte = static_cast<unsigned char>(c);
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == ':' ||
         c == '-' || c == '.' || byte >= 0x80;
}

std::string shown(std::string_view text) { return excerpt(text); }

// "<name>", appended piece by piece: GCC 12 misreports `"<" + string` as an overlapping copy.
std::string tag_of(std::string_view name) {
  std::string tag(1, '<');
  tag += shown(name);
  tag += '>';
  return tag;
}

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

// The node pugixml was reading when it stopped: the last one it added.
pugi::xml_node last_added_node(const pugi::xml_document& document) {
  pugi::xml_node last;
  for (pugi::xml_node node = document.last_child(); node; node = node.last_child()) last = node;
  return last;
}

// The element whose start tag pugixml was reading when it stopped, or the one it was in.
pugi::xml_node last_added_element(const pugi::xml_document& document) {
  pugi::xml_node element;
  for (pugi::xml_node node = document.last_child(); node; node = node.last_child())
    if (node.type() == pugi::node_element) element = node;
  return element;
}

class Reader {
 public:
  Reader(std::string_view text, const std::string& where) : text_(text), where_(where) {
    for (std::size_t i = 0; i < text_.size(); ++i) {
      // "\r\n" and a lone "\r" both end a line, as XML's line-end normalisation says.
      if (text_[i] == '\n' || (text_[i] == '\r' && (i + 1 >= text_.size() || text_[i + 1] != '\n')))
        line_starts_.push_back(i + 1);
    }
  }

  XmlElement read() {
    check_characters();
    // Parsed in place so every name and value pugixml returns points into buffer_, which
    // gives attributes (which have no offset_debug()) their position. The final NUL is the
    // terminator pugixml stops at; check_characters() made sure it is the only one.
    buffer_.assign(text_.begin(), text_.end());
    buffer_.push_back('\0');
    const pugi::xml_parse_result result =
        document_.load_buffer_inplace(buffer_.data(), buffer_.size(), kParseOptions, pugi::encoding_utf8);
    check_depth();
    // After top-level whitespace, pugixml takes a '<' that ends the input for nothing.
    if (result && !text_.empty() && text_.back() == '<')
      fail(text_.size(), "unexpected end of file where element name was expected");
    // pugixml stops at the first syntax error, and everything it built is earlier in the
    // text: a rule broken there is reported first, as the error a reader going front to
    // back meets first.
    std::optional<XmlElement> root = read_top_level();
    if (!result) fail_syntax(result);
    if (!root) fail(text_.size(), "no root element");
    return std::move(*root);
  }

 private:
  std::string_view text_;
  const std::string& where_;
  std::vector<std::size_t> line_starts_{0};
  std::vector<char> buffer_;
  pugi::xml_document document_;

  int line_at(std::size_t offset) const {
    return static_cast<int>(std::upper_bound(line_starts_.begin(), line_starts_.end(), offset) - line_starts_.begin());
  }
  // Values are line-end normalised in place, so a position inside one is its start's line
  // plus the line feeds before it.
  int line_in(std::size_t value_offset, std::string_view value, std::size_t index) const {
    return line_at(value_offset) + static_cast<int>(std::count(value.begin(), value.begin() + index, '\n'));
  }
  std::size_t offset_of(const char* in_buffer) const { return static_cast<std::size_t>(in_buffer - buffer_.data()); }
  // offset_debug() is -1 only for a node without name or value in the buffer, which a
  // parse does not produce; clamped all the same, so no check can index outside text_.
  std::size_t offset_of(const pugi::xml_node& node) const {
    return std::min(static_cast<std::size_t>(node.offset_debug()), text_.size());
  }

  [[noreturn]] void fail_line(int line, const std::string& what) const {
    throw UsageError(where_ + ":" + std::to_string(line) + ": " + what);
  }
  [[noreturn]] void fail(std::size_t offset, const std::string& what) const { fail_line(line_at(offset), what); }

  // XML forbids control characters other than tab, line feed and carriage return, even
  // as references; pugixml does not check, and would take a NUL for the end of the input.
  void check_characters() const {
    for (std::size_t i = 0; i < text_.size(); ++i) {
      const auto byte = static_cast<unsigned char>(text_[i]);
      if (byte >= 0x20 || byte == '\t' || byte == '\n' || byte == '\r') continue;
      if (byte == 0) fail(i, "NUL byte (not a text file?)");
      fail(i, "control character " + describe_char(text_[i]) + " (not allowed in XML)");
    }
  }

  // Turns pugixml's status into one line, in the old reader's words where the text at the
  // error tells which rule was broken. A construct whose terminator never comes was cut off
  // by the end of the file: that is said as such (a truncated copy is the common case) and
  // reported at the last line, where the reader ran out.
  [[noreturn]] void fail_syntax(const pugi::xml_parse_result& result) const {
    const auto offset = std::min(static_cast<std::size_t>(std::max<std::ptrdiff_t>(result.offset, 0)), text_.size());
    const auto ends_before = [&](std::string_view terminator) {
      return text_.find(terminator, offset) == std::string_view::npos;
    };
    const auto at_end = [&](const std::string& where_in_document) {
      fail(text_.size(), "unexpected end of file " + where_in_document);
    };
    const auto opened_at = [&](std::string_view opening) {
      return " (opened at line " + std::to_string(line_at(std::min(text_.rfind(opening, offset), offset))) + ")";
    };
    const char found = offset < text_.size() ? text_[offset] : '\0';
    const char before = offset > 0 ? text_[offset - 1] : '\0';
    const pugi::xml_node element = last_added_element(document_);
    const std::string tag = element ? tag_of(element.name()) : std::string("an element");
    // pugixml reads the declaration's pseudo-attributes as it reads a start tag's.
    const bool in_declaration = last_added_node(document_).type() == pugi::node_declaration;
    if (in_declaration &&
        (result.status == pugi::status_bad_start_element || result.status == pugi::status_bad_attribute)) {
      if (ends_before("?>")) at_end("inside the <?xml ...?> declaration" + opened_at("<?"));
      fail(offset, kMalformedDeclaration);
    }
    switch (result.status) {
      case pugi::status_unrecognized_tag:
        if (ends_before(">")) at_end("where element name was expected");
        if (before == '!') fail(offset, "unknown markup '<!' (expected a comment, CDATA section or DOCTYPE)");
        fail(offset, "element name must start with a letter, '_' or ':' (found " + describe_char(found) + ")");
      case pugi::status_bad_pi:
        if (ends_before("?>")) {
          const bool declaration = text_.substr(std::min(text_.rfind("<?", offset), offset), 5) == "<?xml";
          at_end(std::string(declaration ? "inside the <?xml ...?> declaration" : "inside a processing instruction") +
                 opened_at("<?"));
        }
        if (before == '?')
          fail(offset, "processing instruction target must start with a letter, '_' or ':' (found " +
                           describe_char(found) + ")");
        fail(offset, "<?xml ...?> declaration is only allowed at the very start of the document");
      case pugi::status_bad_comment:
        if (ends_before("-->")) at_end("inside a comment" + opened_at("<!--"));
        fail(offset, "unknown markup '<!' (expected a comment, CDATA section or DOCTYPE)");
      case pugi::status_bad_cdata:
        if (ends_before("]]>")) at_end("inside a CDATA section" + opened_at("<![CDATA["));
        fail(offset, "unknown markup '<!' (expected a comment, CDATA section or DOCTYPE)");
      case pugi::status_bad_doctype:
        if (ends_before(">")) at_end("inside <!DOCTYPE>" + opened_at("<!DOCTYPE"));
        // pugixml refuses a DOCTYPE inside an element; one after the root is checked later.
        fail(offset, element ? "<!DOCTYPE> after the start of the root element" : "malformed <!DOCTYPE>");
      case pugi::status_bad_start_element:
        if (ends_before(">")) at_end("in the start tag of " + tag);
        if (before == '/') fail(offset, "expected '>' after '/' in the start tag of " + tag);
        fail(offset, "unexpected " + describe_char(found) + " in the start tag of " + tag);
      case pugi::status_bad_attribute:
        fail_attribute(offset, element, tag);
      case pugi::status_bad_end_element: {
        const std::size_t opening = text_.rfind("</", offset);
        const std::size_t name = opening == std::string_view::npos ? offset : opening + 2;
        const std::string end_tag = "</" + shown(text_.substr(name, name_length(name))) + ">";
        if (ends_before(">")) at_end("in the end tag " + end_tag);
        fail(offset, "unexpected " + describe_char(found) + " in the end tag " + end_tag);
      }
      case pugi::status_end_element_mismatch:
        fail_mismatch(offset);
      default:
        fail(offset, std::string("cannot parse: ") + result.description());
    }
  }

  // pugixml points at the first character it could not take in an attribute; what comes
  // before it says what was missing.
  [[noreturn]] void fail_attribute(std::size_t offset, const pugi::xml_node& element, const std::string& tag) const {
    const pugi::xml_attribute last = element.last_attribute();
    const std::string described = "attribute " + shown(last ? last.name() : "") + " of " + tag;
    // A value left open: pugixml fails at its start, having found no closing quote.
    if (last && *last.value() != '\0' && offset_of(last.value()) == offset)
      fail(text_.size(), "unexpected end of file in the value of " + described);
    if (text_.find('>', offset) == std::string_view::npos)
      fail(text_.size(), "unexpected end of file in the start tag of " + tag);
    if (offset > 0 && (text_[offset - 1] == '"' || text_[offset - 1] == '\''))
      fail(offset, "missing whitespace before attribute in the start tag of " + tag);
    std::size_t previous = offset;
    while (previous > 0 && is_space(text_[previous - 1])) --previous;
    if (previous > 0 && text_[previous - 1] == '=') fail(offset, "value of " + described + " must be quoted");
    fail(offset, described + " has no value (expected '=')");
  }

  // pugixml reports an element left open at the end on the last character, and an end
  // tag that closes the wrong element on its name.
  [[noreturn]] void fail_mismatch(std::size_t offset) const {
    const bool at_end = offset + 1 >= text_.size();
    const std::string_view name = text_.substr(offset, name_length(offset));
    if (!at_end && name.empty())
      fail(offset, "end tag name must start with a letter, '_' or ':' (found " + describe_char(text_[offset]) + ")");
    // pugixml's partial tree does not say which of its elements were closed, so the text up
    // to the end tag (or the end) is parsed again with an empty element appended: pugixml
    // adds that as a child of the innermost element still open there.
    const std::size_t end_tag = at_end ? text_.size() : text_.rfind("</", offset);
    std::string prefix(text_.substr(0, end_tag));
    prefix += "<_/>";
    pugi::xml_document reparsed;
    reparsed.load_buffer(prefix.data(), prefix.size(), kParseOptions, pugi::encoding_utf8);
    const pugi::xml_node appended = last_added_element(reparsed);
    const pugi::xml_node open = appended ? appended.parent() : pugi::xml_node();
    // A '>' where "?>" belongs makes pugixml read on inside the declaration.
    if (open.type() == pugi::node_declaration) fail(offset_of(open), kMalformedDeclaration);
    if (open.type() != pugi::node_element) {
      if (at_end) fail(text_.size(), "unexpected end of file inside an element");
      fail(offset, "</" + shown(name) + "> has no matching start tag");
    }
    const std::string opened = "opened at line " + std::to_string(line_at(offset_of(open)));
    if (at_end) fail(text_.size(), "unexpected end of file inside " + tag_of(open.name()) + " (" + opened + ")");
    fail(offset, "</" + shown(name) + "> closes " + tag_of(open.name()) + " " + opened);
  }

  std::size_t name_length(std::size_t start) const {
    std::size_t end = start;
    while (end < text_.size() && is_name_char(text_[end])) ++end;
    return end - start;
  }

  // Runs before any other check, on what pugixml built up to an error too, because the old
  // reader refused the 257th nested start tag as soon as it met it. convert() recurses
  // once per level, so this is also what bounds its stack.
  void check_depth() const {
    struct FirstTooDeep : pugi::xml_tree_walker {
      pugi::xml_node found;
      bool for_each(pugi::xml_node& node) override {
        // depth() counts the enclosing elements: the root's is 0.
        if (node.type() == pugi::node_element && static_cast<std::size_t>(depth()) >= kMaxDepth) found = node;
        return !found;
      }
    };
    FirstTooDeep walker;
    pugi::xml_node(document_).traverse(walker);
    if (walker.found)
      fail(offset_of(walker.found), "elements nested deeper than " + std::to_string(kMaxDepth) + " levels");
  }

  void check_comment(const pugi::xml_node& comment) const {
    // The XML grammar allows "--" only as part of the closing "-->", so "<!-- a --->"
    // is refused as well.
    const std::string_view value = comment.value();
    std::size_t dashes = value.find("--");
    if (dashes == std::string_view::npos && !value.empty() && value.back() == '-') dashes = value.size() - 1;
    if (dashes == std::string_view::npos) return;
    const std::size_t start = offset_of(comment);
    fail_line(line_in(start, value, dashes), "'--' inside a comment (opened at line " + std::to_string(line_at(start)) + ")");
  }

  // Converts the root element, refusing what pugixml accepts but XML does not allow before
  // the root element or after it. Empty when there is no element at all.
  std::optional<XmlElement> read_top_level() const {
    std::optional<XmlElement> converted;
    pugi::xml_node root;
    bool seen_doctype = false;
    const std::size_t declaration_offset = text_.substr(0, 3) == "\xef\xbb\xbf" ? 5 : 2;
    for (const pugi::xml_node& node : document_.children()) {
      const std::size_t offset = offset_of(node);
      switch (node.type()) {
        case pugi::node_element:
          if (root)
            fail(offset, "second root element " + tag_of(node.name()) + " after the root " + tag_of(root.name()) +
                             " ended at line " + std::to_string(line_at(end_of(root))));
          root = node;
          converted = convert(node);
          break;
        case pugi::node_pcdata: {
          const std::string_view value = node.value();
          const auto text = std::find_if_not(value.begin(), value.end(), is_space);
          if (text != value.end())
            fail_line(line_in(offset, value, static_cast<std::size_t>(text - value.begin())),
                      root ? "text after the end of the root element" : "text before the root element");
          break;
        }
        case pugi::node_cdata:
          fail(offset, "CDATA section outside the root element");
        case pugi::node_declaration:
          // pugixml takes <?XML ...?> for a declaration too, and anywhere outside elements.
          if (offset != declaration_offset || std::string_view(node.name()) != "xml")
            fail(offset, "<?xml ...?> declaration is only allowed at the very start of the document");
          break;
        case pugi::node_doctype:
          if (root) fail(offset, "<!DOCTYPE> after the start of the root element");
          if (seen_doctype) fail(offset, "second <!DOCTYPE>");
          seen_doctype = true;
          check_doctype(node);
          break;
        case pugi::node_comment:
          check_comment(node);
          break;
        default:
          break;
      }
    }
    return converted;
  }

  // The last character of a top-level node that has a next sibling. Whitespace is a node
  // too (parse_ws_pcdata), so the sibling starts right after it; any other sibling's
  // offset is of its name or value, whose markup opens at the last '<' before it.
  std::size_t end_of(const pugi::xml_node& node) const {
    const pugi::xml_node next = node.next_sibling();
    const std::size_t at = offset_of(next);
    return (next.type() == pugi::node_pcdata ? at : text_.rfind('<', at)) - 1;
  }

  // pugixml finds where a DOCTYPE ends by rules of its own, more lenient than XML's and
  // than the old reader's, which this holds the DOCTYPE to: whitespace after the keyword;
  // brackets balanced outside quoted literals, and in the internal subset outside
  // comments (with no '--' in them) and processing instructions; no '>' outside it.
  void check_doctype(const pugi::xml_node& doctype) const {
    const std::size_t offset = offset_of(doctype);
    if (offset == 0 || !is_space(text_[offset - 1])) fail(offset, "expected whitespace after <!DOCTYPE");
    const std::string_view value = doctype.value();
    const auto fail_at = [&](std::size_t index, const std::string& what) {
      fail_line(line_in(offset, value, index), what);
    };
    int brackets = 0;
    for (std::size_t i = 0; i < value.size(); ++i) {
      const char c = value[i];
      if (brackets > 0 && value.substr(i, 4) == "<!--") {
        const std::size_t dashes = value.find("--", i + 4);
        if (dashes == std::string_view::npos || value.substr(dashes, 3) != "-->")
          fail_at(dashes == std::string_view::npos ? i : dashes,
                  "'--' inside a comment (opened at line " + std::to_string(line_in(offset, value, i)) + ")");
        i = dashes + 2;
      } else if (brackets > 0 && value.substr(i, 2) == "<?") {
        const std::size_t end = value.find("?>", i + 2);
        if (end == std::string_view::npos) fail_at(i, "unterminated processing instruction in <!DOCTYPE>");
        i = end + 1;
      } else if (c == '"' || c == '\'') {
        const std::size_t end = value.find(c, i + 1);
        if (end == std::string_view::npos) fail_at(i, "unterminated quoted literal in <!DOCTYPE>");
        i = end;
      } else if (c == '[') {
        ++brackets;
      } else if (c == ']' || (c == '>' && brackets == 0)) {
        if (brackets == 0) fail_at(i, std::string("unexpected '") + c + "' in <!DOCTYPE>");
        --brackets;
      }
    }
    if (brackets > 0) fail_at(value.size(), "'[' without its ']' in <!DOCTYPE>");
  }

  // Recursive: check_depth() has bounded the nesting.
  XmlElement convert(const pugi::xml_node& node) const {
    XmlElement element;
    element.name = node.name();
    element.line = line_at(offset_of(node));
    const std::string tag = tag_of(element.name);
    // Used only once a tag has many attributes; the names it holds point into buffer_.
    std::unordered_set<std::string_view> seen;
    for (const pugi::xml_attribute& attribute : node.attributes()) {
      const std::string_view name = attribute.name();
      const std::string described = "attribute " + shown(name) + " of " + tag;
      bool duplicate = false;
      if (element.attributes.size() < kLinearDuplicateScan) {
        duplicate = element.attribute(name) != nullptr;
      } else {
        if (seen.empty())
          for (pugi::xml_attribute earlier = node.first_attribute(); earlier != attribute;
               earlier = earlier.next_attribute())
            seen.insert(earlier.name());
        duplicate = !seen.insert(name).second;
      }
      if (duplicate) fail(offset_of(attribute.name()), "duplicate " + described);

      // An empty value is pugixml's shared empty string, outside the buffer: nothing to check.
      const std::string_view raw = attribute.value();
      std::string value;
      if (!raw.empty()) {
        const std::size_t offset = offset_of(attribute.value());
        if (const std::size_t less = raw.find('<'); less != std::string_view::npos)
          fail_line(line_in(offset, raw, less), "'<' in the value of " + described);
        value = decode(raw, offset, true);
      }
      element.attributes.emplace_back(name, std::move(value));
    }
    for (const pugi::xml_node& child : node.children()) {
      switch (child.type()) {
        case pugi::node_element:
          element.children.push_back(convert(child));
          break;
        case pugi::node_pcdata:
          element.text += decode(child.value(), offset_of(child), false);
          break;
        case pugi::node_cdata:
          element.text += child.value();
          break;
        case pugi::node_comment:
          check_comment(child);
          break;
        default:
          break;
      }
    }
    return element;
  }

  // Decodes references in character data or an attribute value that starts at `offset`.
  // Attribute values also get XML's whitespace normalisation (tab and line feed become
  // spaces); characters written as references are kept as they are.
  std::string decode(std::string_view raw, std::size_t offset, bool attribute) const {
    std::string out;
    out.reserve(raw.size());
    for (std::size_t i = 0; i < raw.size(); ++i) {
      const char c = raw[i];
      if (c == '&') {
        i = decode_reference(out, raw, i, offset);
      } else if (attribute && (c == '\n' || c == '\t')) {
        out += ' ';
      } else {
        if (!attribute && c == ']' && raw.substr(i, 3) == "]]>")
          fail_line(line_in(offset, raw, i), "']]>' in text (write ]]&gt;)");
        out += c;
      }
    }
    return out;
  }

  // Decodes the reference starting at raw[amp] == '&'; returns the index of its ';'.
  std::size_t decode_reference(std::string& out, std::string_view raw, std::size_t amp, std::size_t offset) const {
    // Known references are short; looking further than this for the ';' would let a
    // long run of text after a stray '&' be scanned again for every '&' in it.
    constexpr std::size_t kLongestReference = 32;
    const auto fail_here = [&](const std::string& what) { fail_line(line_in(offset, raw, amp), what); };
    std::size_t semicolon = amp + 1;
    while (semicolon < raw.size() && semicolon - amp <= kLongestReference && raw[semicolon] != ';' &&
           (is_name_char(raw[semicolon]) || raw[semicolon] == '#'))
      ++semicolon;
    if (semicolon >= raw.size() || raw[semicolon] != ';' || semicolon == amp + 1)
      fail_here("'&' not followed by an entity or character reference (write &amp; for '&')");
    const std::string_view name = raw.substr(amp + 1, semicolon - amp - 1);
    if (name[0] != '#') {
      if (name == "lt") out += '<';
      else if (name == "gt") out += '>';
      else if (name == "amp") out += '&';
      else if (name == "quot") out += '"';
      else if (name == "apos") out += '\'';
      else fail_here("unknown entity &" + shown(name) + ";");
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
    if (!valid || !is_xml_char(code)) fail_here("invalid character reference &" + shown(name) + ";");
    append_utf8(out, code);
    return semicolon;
  }
};

}  // namespace

XmlElement parse_xml(std::string_view text, const std::string& where) { return Reader(text, where).read(); }

XmlElement read_xml_file(const std::string& path) { return parse_xml(read_input_file(path, path), path); }

}  // namespace commbench
