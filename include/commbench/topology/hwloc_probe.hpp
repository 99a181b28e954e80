// The PCI tree, NUMA nodes and CPU affinity through hwloc 2.x: of this machine, or of an
// XML export (`lstopo --of xml`, or `--hwloc-xml FILE`) that a user sends in.
#pragma once

#include <string>

#include "commbench/topology/node_topology.hpp"

namespace commbench {

// True when this build has hwloc (COMMBENCH_WITH_HWLOC).
bool hwloc_available();

// Fills NUMA nodes, the PCI tree (host bridges, bridges, devices), GPUs (NVIDIA display
// and 3D controllers, in PCI bus order), RDMA NICs (network devices with an OpenFabrics
// OS device) and NVLinks from hwloc's "NVLinkBandwidth" distances when present.
// `xml_path` empty = this machine. Bad XML, unknown PCI classes or a device listed twice
// are a UsageError naming the file; a build without hwloc says so in `unknowns` (this
// machine) or is a UsageError (a file was asked for).
NodeTopology probe_hwloc(const std::string& xml_path = "");

// NVLink generation of a GPU from its model name (P100 1, V100 2, A100 2→3, H100/H200 4,
// B200 5); 0 when the name says nothing.
int nvlink_generation_from_model(const std::string& model);

}  // namespace commbench
