#include "commbench/topology/xml_document.hpp"

#include <algorithm>
#include <optional>
#include <unordered_set>

#include <fmt/format.h>

#include "commbench/core/error.hpp"
#include "commbench/core/input_file.hpp"
#include "parsed_xml.hpp"
#include "xml_markup.hpp"
#include "xml_parse_failure.hpp"
#include "xml_text.hpp"

namespace commbench {

const std::string* XmlElement::attribute(std::string_view wanted) const {
  for (const auto& [key, value] : attributes)
    if (key == wanted) return &value;
  return nullptr;
}

namespace {

using xml::describe_char;
using xml::is_space;
using xml::tag_of;

constexpr std::size_t kMaxDepth = 256;
// Beyond this many attributes on one tag the duplicate check switches to a hash set, so a
// tag with a million attributes stays linear.
constexpr std::size_t kLinearDuplicateScan = 16;

// Reads what pugixml parsed into XmlElements, refusing what XML forbids but pugixml lets
// through.
class Reader {
 public:
  Reader(std::string_view text, const std::string& where) : text_(text), where_(where), parsed_(text) {}

  XmlElement read() const {
    check_characters();
    check_depth();
    // After top-level whitespace, pugixml takes a '<' that ends the input for nothing.
    if (parsed_.result() && !text_.empty() && text_.back() == '<')
      fail(text_.size(), "unexpected end of file where element name was expected");
    // pugixml stops at the first syntax error, and everything it built is earlier in the
    // text: a rule broken there is reported first, as the error a reader going front to
    // back meets first.
    std::optional<XmlElement> root = read_top_level();
    if (!parsed_.result()) {
      const xml::Problem problem = xml::explain_parse_failure(parsed_);
      fail(problem.offset, problem.what);
    }
    if (!root) fail(text_.size(), "no root element");
    return std::move(*root);
  }

 private:
  std::string_view text_;
  const std::string& where_;
  xml::ParsedXml parsed_;

  [[noreturn]] void fail_line(int line, const std::string& what) const {
    throw UsageError(fmt::format("{}:{}: {}", where_, line, what));
  }
  [[noreturn]] void fail(std::size_t offset, const std::string& what) const { fail_line(line_at(offset), what); }
  int line_at(std::size_t offset) const { return parsed_.line_at(offset); }
  std::size_t offset_of(const pugi::xml_node& node) const { return parsed_.offset_of(node); }
  int line_in(std::size_t value_offset, std::string_view value, std::size_t index) const {
    return parsed_.line_in(value_offset, value, index);
  }

  // XML forbids control characters other than tab, line feed and carriage return, even
  // as references; pugixml does not check, and stopped at the first NUL. So this comes
  // before anything pugixml built is looked at.
  void check_characters() const {
    for (std::size_t i = 0; i < text_.size(); ++i) {
      const auto byte = static_cast<unsigned char>(text_[i]);
      if (byte >= 0x20 || byte == '\t' || byte == '\n' || byte == '\r') continue;
      if (byte == 0) fail(i, "NUL byte (not a text file?)");
      fail(i, "control character " + describe_char(text_[i]) + " (not allowed in XML)");
    }
  }

  // Runs before the other checks of the tree, on what pugixml built up to an error too,
  // because the old reader refused the 257th nested start tag as soon as it met it.
  // convert() recurses once per level, so this is also what bounds its stack.
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
    pugi::xml_node(parsed_.document()).traverse(walker);
    if (walker.found) fail(offset_of(walker.found), fmt::format("elements nested deeper than {} levels", kMaxDepth));
  }

  void check_comment(const pugi::xml_node& comment) const {
    // The XML grammar allows "--" only as part of the closing "-->", so "<!-- a --->"
    // is refused as well.
    const std::string_view value = comment.value();
    std::size_t dashes = value.find("--");
    if (dashes == std::string_view::npos && !value.empty() && value.back() == '-') dashes = value.size() - 1;
    if (dashes == std::string_view::npos) return;
    const std::size_t start = offset_of(comment);
    fail_line(line_in(start, value, dashes), fmt::format("'--' inside a comment (opened at line {})", line_at(start)));
  }

  // Converts the root element, refusing what pugixml accepts but XML does not allow before
  // the root element or after it. Empty when there is no element at all.
  std::optional<XmlElement> read_top_level() const {
    std::optional<XmlElement> converted;
    pugi::xml_node root;
    bool seen_doctype = false;
    const std::size_t declaration_offset = text_.substr(0, 3) == "\xef\xbb\xbf" ? 5 : 2;
    for (const pugi::xml_node& node : parsed_.document().children()) {
      const std::size_t offset = offset_of(node);
      switch (node.type()) {
        case pugi::node_element:
          if (root)
            fail(offset, fmt::format("second root element {} after the root {} ended at line {}", tag_of(node.name()),
                                     tag_of(root.name()), line_at(end_of(root))));
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
        case pugi::node_cdata: fail(offset, "CDATA section outside the root element");
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
        case pugi::node_comment: check_comment(node); break;
        default: break;
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
                  fmt::format("'--' inside a comment (opened at line {})", line_in(offset, value, i)));
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
      const std::string described = "attribute " + excerpt(name) + " of " + tag;
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
      if (duplicate) fail(parsed_.offset_of(attribute.name()), "duplicate " + described);

      // An empty value is pugixml's shared empty string, outside the buffer: nothing to check.
      const std::string_view raw = attribute.value();
      std::string value;
      if (!raw.empty()) {
        const std::size_t offset = parsed_.offset_of(attribute.value());
        if (const std::size_t less = raw.find('<'); less != std::string_view::npos)
          fail_line(line_in(offset, raw, less), "'<' in the value of " + described);
        append_decoded(value, raw, offset, xml::TextKind::attribute_value);
      }
      element.attributes.emplace_back(name, std::move(value));
    }
    for (const pugi::xml_node& child : node.children()) {
      switch (child.type()) {
        case pugi::node_element: element.children.push_back(convert(child)); break;
        case pugi::node_pcdata:
          append_decoded(element.text, child.value(), offset_of(child), xml::TextKind::character_data);
          break;
        case pugi::node_cdata: element.text += child.value(); break;
        case pugi::node_comment: check_comment(child); break;
        default: break;
      }
    }
    return element;
  }

  void append_decoded(std::string& out, std::string_view raw, std::size_t offset, xml::TextKind kind) const {
    if (const std::optional<xml::TextError> error = xml::append_decoded(out, raw, kind))
      fail_line(line_in(offset, raw, error->index), error->what);
  }
};

}  // namespace

XmlElement parse_xml(std::string_view text, const std::string& where) { return Reader(text, where).read(); }

XmlElement read_xml_file(const std::string& path) { return parse_xml(read_input_file(path, path), path); }

}  // namespace commbench
