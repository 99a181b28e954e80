// NCCL's own view of a node: the XML it writes when NCCL_TOPO_DUMP_FILE is set
// (<system> / <cpu> / nested <pci> / <gpu> with <nvlink> / <nic> with <net>), loaded
// into the plain NodeTopology model so a dump taken on a cluster node can be compared
// and classified like a live probe.
//
// What the dump cannot say (NIC port and physical state, link layer, GPU P2P status,
// GPU model names) is left unknown and listed in NodeTopology::unknowns. Elements and
// attributes this loader does not know (pcilink, c2c, gin, rma, rank, gdr, guid, ...) are
// ignored, so dumps from newer NCCL versions still load; a known element in a place NCCL
// never writes it (a <gpu> directly in a <cpu>, a <net> outside a <nic>) is an error,
// because it means the file is not what it claims to be.
#pragma once

#include <string>

#include "commbench/topology/node_topology.hpp"
#include "commbench/topology/xml_document.hpp"

namespace commbench {

// Loads the XML NCCL writes with NCCL_TOPO_DUMP_FILE into the model. UsageError naming the
// file (and line) for anything malformed: "PATH:LINE: what was wrong".
NodeTopology load_nccl_topo_xml(const std::string& path);

// The same from an already parsed document; `where` names it in errors and in `sources`.
NodeTopology nccl_topo_from_xml(const XmlElement& root, const std::string& where);

}  // namespace commbench
