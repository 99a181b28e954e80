// What the driver knows about GPUs and the links between them, through NVML. NVML ships
// with the driver, not with this build: it is loaded at run time, so the same binary runs
// (and says what it could not learn) on hosts without one.
#pragma once

#include <string>
#include <string_view>

#include "commbench/topology/node_topology.hpp"

namespace commbench {

// Adds what NVML knows to `node`:
//  - GPUs, merged by PCI bus id with node.gpus (a GPU not there yet is appended with the
//    next free index, source "nvml"); where NVML answers, its model, compute capability,
//    NVLink generation and PCIe generation/width (current and max) replace what was there;
//  - active NVLinks grouped by remote bus id into node.nvlinks (peer from the remote device
//    type; gbps_per_link from the generation), replacing groups with the same GPU and remote;
//  - P2P read/write/atomics/nvlink status, one entry per unordered pair (gpu_a < gpu_b),
//    replacing an entry for the same pair;
//  - "NVML <library> (driver <version>)" in node.sources.
// Never throws for a missing or failing NVML; appends one line to node.unknowns instead:
//   "NVLink, P2P and PCIe link state unknown: NVML not loadable (<dlerror>)"
//   "NVLink, P2P and PCIe link state unknown: <library> has no <symbol> (not NVML, or a driver too old)"
//   "NVLink, P2P and PCIe link state unknown: nvmlInit_v2 failed: <nvmlErrorString> (<code>)"
// and, when NVML loads, one line per kind of partial failure:
//   "NVML <library> lacks <symbol>, ...: what they report is unknown"
//   "NVML <function> failed on GPU <bus id>, ...: <nvmlErrorString> (<code>)"
// `library` overrides the library name (tests); empty = environment COMMBENCH_NVML_LIBRARY
// when set and not empty, else "libnvidia-ml.so.1".
void probe_nvml(NodeTopology& node, const std::string& library = "");

// The NVML library to load: `library`, else COMMBENCH_NVML_LIBRARY when set and not empty,
// else "libnvidia-ml.so.1" (every user of NVML here loads it this way).
std::string nvml_library_name(const std::string& library = "");

// nvmlDeviceGetNvLinkVersion answers an nvmlNvlinkVersion_t, not the generation:
// 1 -> 1, 2 and 3 -> 2, 4 and 5 -> 3, 6 -> 4 (H100), 7 -> 5 (B200); 0 for anything else.
int nvlink_generation_from_nvml_version(unsigned version);

}  // namespace commbench
