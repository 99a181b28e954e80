// A small, strict, non-validating XML reader for the topology files commbench loads
// (NCCL's topology dump, hwloc's export). pugixml (Debian's libpugixml-dev) parses the
// document; on top of it this reader refuses what pugixml lets through (unknown entities,
// invalid character references, duplicate attributes, text or a second element outside
// the root, a misplaced DOCTYPE or <?xml ...?> declaration, '--' in comments, nesting past
// 256), so every malformed input ends in one UsageError that names the file and line,
// whatever a user or a fuzzer feeds it.
//
// Deliberately not supported: DTD processing (a DOCTYPE, internal subset included, is
// skipped, so entities it declares are unknown and rejected rather than expanded; no
// entity expansion means no "billion laughs"), namespaces (a prefix stays part of the
// name), encodings other than UTF-8/ASCII (bytes are passed through, not transcoded or
// validated).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace commbench {

struct XmlElement {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attributes;  // document order, entities decoded
  std::vector<XmlElement> children;
  // Character data directly inside this element (between its children too, indentation
  // included), concatenated, entities decoded, line ends normalised to "\n".
  std::string text;
  int line = 0;  // line of the start tag (1-based)

  const std::string* attribute(std::string_view name) const;  // nullptr when absent
};

// Parses a whole document and returns its root element. `where` names the input (a file
// path) in errors: every error is a UsageError "WHERE:LINE: what was wrong", one line.
// Nesting deeper than 256 elements is refused, so no input can exhaust the stack of code
// that walks the tree recursively.
XmlElement parse_xml(std::string_view text, const std::string& where);

// Reads and parses a file. "PATH: cannot read (REASON)" when it cannot be opened or read,
// "PATH: empty file", "PATH: larger than 64 MiB" for anything bigger.
XmlElement read_xml_file(const std::string& path);

}  // namespace commbench
