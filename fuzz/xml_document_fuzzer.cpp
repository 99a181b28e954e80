#include <string>

#include "commbench/topology/xml_document.hpp"
#include "fuzz_support.hpp"

namespace {

// What every parsed tree must satisfy, whatever the input: named elements, lines that
// never go backwards in document order, and no deeper nesting than the parser allows.
void check(const commbench::XmlElement& element, int parent_line, int depth) {
  if (element.name.empty() || depth > 256 || element.line < 1 || element.line < parent_line) std::abort();
  for (const auto& [key, value] : element.attributes)
    if (key.empty()) std::abort();
  int previous = element.line;
  for (const commbench::XmlElement& child : element.children) {
    if (child.line < previous) std::abort();
    check(child, element.line, depth + 1);
    previous = child.line;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = commbench::fuzz::as_text(data, size);
  commbench::fuzz::expect_value_or_usage_error([&] {
    const commbench::XmlElement root = commbench::parse_xml(text, "fuzz.xml");
    check(root, 1, 1);
  });
  return 0;
}
