// Why pugixml refused a text, said in one line in the words of commbench's reader.
// Internal to the topology library.
#pragma once

#include <cstddef>
#include <string>

#include "parsed_xml.hpp"

namespace commbench::xml {

struct Problem {
  std::size_t offset;  // into the text: where to report it (its size for the end of the file)
  std::string what;
};

// For a failed parse. pugixml gives a status and an offset; the text around the offset
// says which rule was broken. A construct whose terminator never comes was cut off by the
// end of the file, and is reported there as "unexpected end of file ...".
Problem explain_parse_failure(const ParsedXml& parsed);

inline constexpr const char* kMalformedDeclaration =
    "malformed <?xml ...?> declaration (expected version=\"1.0\" and name=\"value\" pairs)";

}  // namespace commbench::xml
