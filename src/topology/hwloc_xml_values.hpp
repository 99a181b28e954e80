// The values of an hwloc XML export, checked before hwloc reads it: on our own reading of
// the document a bad one is reported with its line, where hwloc would drop it silently.
// Plain XML, so it needs no hwloc. Internal to the topology library.
#pragma once

#include <string>

#include "commbench/topology/xml_document.hpp"

namespace commbench {

// Throws UsageError "path:line: ..." for the first attribute of `element` or of its
// descendants that hwloc would misread or drop: PCI bus ids, cpusets and nodesets,
// indexes, link speeds, and PCI classes (hwloc drops devices of classes it finds
// unimportant).
void check_hwloc_values(const XmlElement& element, const std::string& path);

}  // namespace commbench
