// GPU PCIe links as Linux shows them under /sys/bus/pci/devices/<bus id>/, and the rule
// that keeps idle GPUs from looking degraded: a GPU lowers its link *generation* to save
// power while idle (hwloc and `current_link_speed` then read low), but never its *width*.
// So the comparable figure is the maximum generation at the current width.
#pragma once

#include <string>

#include "commbench/topology/node_topology.hpp"

namespace commbench {

// Fills generation (max) and width (current, max) of every GPU that NVML did not already
// describe, from <sysfs_root>/bus/pci/devices/<bus id>/{max_link_speed,current_link_width,
// max_link_width}. Missing files leave the GPU as it was; garbage is a UsageError naming
// the file.
void read_sysfs_pcie_links(NodeTopology& node, const std::string& sysfs_root = "/sys");

// Sets each GPU's PCI link bandwidth to max generation x current width where both are
// known, replacing an idle-time figure (hwloc's current link speed).
void use_idle_proof_gpu_links(NodeTopology& node);

}  // namespace commbench
