// The full node model as JSON: what bench-topology writes.
#pragma once

#include <string>

#include "commbench/topology/node_topology.hpp"

namespace commbench {

std::string topology_to_json_text(const NodeTopology& node);
// Inverse of topology_to_json_text; `where` names the source in errors (UsageError).
NodeTopology topology_from_json_text(const std::string& text, const std::string& where);
// `node` as its file holds it: names that are not UTF-8 with U+FFFD in their bytes' place,
// and its PCI indexes checked (UsageError naming `where`), so a model received from
// another rank is judged as the one written.
NodeTopology topology_as_written(const NodeTopology& node, const std::string& where);

}  // namespace commbench
