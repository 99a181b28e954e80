// The full node model as JSON: what bench-topology writes, and how ranks send their
// node's model to rank 0 for the cross-node comparison.
#pragma once

#include <string>

#include "commbench/topology/node_topology.hpp"

namespace commbench {

std::string topology_to_json_text(const NodeTopology& node);
// Inverse of topology_to_json_text; `where` names the source in errors (UsageError).
NodeTopology topology_from_json_text(const std::string& text, const std::string& where);

}  // namespace commbench
