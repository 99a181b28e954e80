#include "xml_parse_failure.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "xml_markup.hpp"

namespace commbench::xml {
namespace {

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

class Explanation {
 public:
  explicit Explanation(const ParsedXml& parsed)
      : parsed_(parsed),
        text_(parsed.text()),
        offset_(std::min(static_cast<std::size_t>(std::max<std::ptrdiff_t>(parsed.result().offset, 0)), text_.size())),
        found_(offset_ < text_.size() ? text_[offset_] : '\0'),
        before_(offset_ > 0 ? text_[offset_ - 1] : '\0'),
        element_(last_added_element(parsed.document())),
        tag_(element_ ? tag_of(element_.name()) : std::string("an element")) {}

  Problem explain() const {
    const pugi::xml_parse_status status = parsed_.result().status;
    // pugixml reads the declaration's pseudo-attributes as it reads a start tag's.
    if (last_added_node(parsed_.document()).type() == pugi::node_declaration &&
        (status == pugi::status_bad_start_element || status == pugi::status_bad_attribute)) {
      if (ends_before("?>")) return at_end("inside the <?xml ...?> declaration" + opened_at("<?"));
      return here(kMalformedDeclaration);
    }
    switch (status) {
      case pugi::status_unrecognized_tag:
        if (ends_before(">")) return at_end("where element name was expected");
        if (before_ == '!') return here("unknown markup '<!' (expected a comment, CDATA section or DOCTYPE)");
        return here("element name must start with a letter, '_' or ':' (found " + describe_char(found_) + ")");
      case pugi::status_bad_pi:
        if (ends_before("?>")) {
          const bool declaration = text_.substr(std::min(text_.rfind("<?", offset_), offset_), 5) == "<?xml";
          return at_end(
              std::string(declaration ? "inside the <?xml ...?> declaration" : "inside a processing instruction") +
              opened_at("<?"));
        }
        if (before_ == '?')
          return here("processing instruction target must start with a letter, '_' or ':' (found " +
                      describe_char(found_) + ")");
        return here("<?xml ...?> declaration is only allowed at the very start of the document");
      case pugi::status_bad_comment:
        if (ends_before("-->")) return at_end("inside a comment" + opened_at("<!--"));
        return here("unknown markup '<!' (expected a comment, CDATA section or DOCTYPE)");
      case pugi::status_bad_cdata:
        if (ends_before("]]>")) return at_end("inside a CDATA section" + opened_at("<![CDATA["));
        return here("unknown markup '<!' (expected a comment, CDATA section or DOCTYPE)");
      case pugi::status_bad_doctype:
        if (ends_before(">")) return at_end("inside <!DOCTYPE>" + opened_at("<!DOCTYPE"));
        // pugixml refuses a DOCTYPE inside an element; one after the root is the reader's check.
        return here(element_ ? "<!DOCTYPE> after the start of the root element" : "malformed <!DOCTYPE>");
      case pugi::status_bad_start_element:
        if (ends_before(">")) return at_end("in the start tag of " + tag_);
        if (before_ == '/') return here("expected '>' after '/' in the start tag of " + tag_);
        return here("unexpected " + describe_char(found_) + " in the start tag of " + tag_);
      case pugi::status_bad_attribute: return bad_attribute();
      case pugi::status_bad_end_element: {
        const std::size_t opening = text_.rfind("</", offset_);
        const std::size_t name = opening == std::string_view::npos ? offset_ : opening + 2;
        const std::string end_tag = "</" + excerpt(text_.substr(name, name_length(name))) + ">";
        if (ends_before(">")) return at_end("in the end tag " + end_tag);
        return here("unexpected " + describe_char(found_) + " in the end tag " + end_tag);
      }
      case pugi::status_end_element_mismatch: return mismatch();
      default: return here(std::string("cannot parse: ") + parsed_.result().description());
    }
  }

 private:
  const ParsedXml& parsed_;
  std::string_view text_;
  std::size_t offset_;  // where pugixml stopped
  char found_;          // the character there, and the one before it
  char before_;
  pugi::xml_node element_;
  std::string tag_;

  Problem here(std::string what) const { return Problem{offset_, std::move(what)}; }
  Problem at_end(const std::string& where_in_document) const {
    return Problem{text_.size(), "unexpected end of file " + where_in_document};
  }
  bool ends_before(std::string_view terminator) const {
    return text_.find(terminator, offset_) == std::string_view::npos;
  }
  std::string opened_at(std::string_view opening) const {
    return fmt::format(" (opened at line {})", parsed_.line_at(std::min(text_.rfind(opening, offset_), offset_)));
  }
  std::size_t name_length(std::size_t start) const {
    std::size_t end = start;
    while (end < text_.size() && is_name_char(text_[end])) ++end;
    return end - start;
  }

  // pugixml points at the first character it could not take in an attribute; what comes
  // before it says what was missing.
  Problem bad_attribute() const {
    const pugi::xml_attribute last = element_.last_attribute();
    const std::string described = "attribute " + excerpt(last ? last.name() : "") + " of " + tag_;
    // A value left open: pugixml fails at its start, having found no closing quote.
    if (last && *last.value() != '\0' && parsed_.offset_of(last.value()) == offset_)
      return at_end("in the value of " + described);
    if (ends_before(">")) return at_end("in the start tag of " + tag_);
    if (before_ == '"' || before_ == '\'')
      return here("missing whitespace before attribute in the start tag of " + tag_);
    std::size_t previous = offset_;
    while (previous > 0 && is_space(text_[previous - 1])) --previous;
    if (previous > 0 && text_[previous - 1] == '=') return here("value of " + described + " must be quoted");
    return here(described + " has no value (expected '=')");
  }

  // pugixml reports an element left open at the end on the last character, and an end
  // tag that closes the wrong element on its name.
  Problem mismatch() const {
    const bool at_eof = offset_ + 1 >= text_.size();
    const std::string_view name = text_.substr(offset_, name_length(offset_));
    if (!at_eof && name.empty())
      return here("end tag name must start with a letter, '_' or ':' (found " + describe_char(found_) + ")");
    // pugixml's partial tree does not say which of its elements were closed, so the text up
    // to the end tag (or the end) is parsed again with an empty element appended: pugixml
    // adds that as a child of the innermost element still open there.
    std::string prefix(text_.substr(0, at_eof ? text_.size() : text_.rfind("</", offset_)));
    prefix += "<_/>";
    pugi::xml_document reparsed;
    reparsed.load_buffer(prefix.data(), prefix.size(), kParseOptions, pugi::encoding_utf8);
    const pugi::xml_node appended = last_added_element(reparsed);
    const pugi::xml_node open = appended ? appended.parent() : pugi::xml_node();
    // A '>' where "?>" belongs makes pugixml read on inside the declaration.
    if (open.type() == pugi::node_declaration) return Problem{parsed_.offset_of(open), kMalformedDeclaration};
    if (open.type() != pugi::node_element) {
      if (at_eof) return at_end("inside an element");
      return here("</" + excerpt(name) + "> has no matching start tag");
    }
    const std::string opened = fmt::format("opened at line {}", parsed_.line_at(parsed_.offset_of(open)));
    if (at_eof) return at_end("inside " + tag_of(open.name()) + " (" + opened + ")");
    return here("</" + excerpt(name) + "> closes " + tag_of(open.name()) + " " + opened);
  }
};

}  // namespace

Problem explain_parse_failure(const ParsedXml& parsed) { return Explanation(parsed).explain(); }

}  // namespace commbench::xml
