// Which GPUs are NVLink parts (SXM modules, whose NVLinks are always wired to peers or
// NVSwitches): a source that cannot record NVLink (an hwloc export made without NVML)
// must leave such a GPU's pairs unknown instead of showing the PCIe path as the link.
#pragma once

#include <string>

#include "commbench/topology/node_topology.hpp"

namespace commbench {

// The product name of an NVIDIA SXM part by PCI device id ("A100-SXM4-40GB" for 0x20b0);
// empty when the id is not one of the SXM parts listed.
std::string sxm_part_name(unsigned vendor, unsigned device_id);

// True for an SXM part: by PCI device id, or by a model name that says "SXM" (NVML's
// names do: "NVIDIA A100-SXM4-80GB", "Tesla V100-SXM2-16GB").
bool is_nvlink_part(unsigned vendor, unsigned device_id, const std::string& model);

// The `unknowns` line for the GPUs marked Gpu::nvlinks_unrecorded, naming them and their
// parts; empty when none is marked.
std::string unrecorded_nvlinks_line(const NodeTopology& node);

}  // namespace commbench
