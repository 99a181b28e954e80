// Probe options with what this build can add: the CUDA runtime's device list when the
// build has the NCCL backend (the only target allowed to see CUDA).
#pragma once

#include <string>

#include "commbench/topology/node_probe.hpp"

namespace commbench {

ProbeOptions probe_options_for_this_build(const std::string& hwloc_xml, const std::string& sysfs_root,
                                          const std::string& nccl_topo_xml);

}  // namespace commbench
