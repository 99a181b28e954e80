// Probing one node: every source that can say something, merged into one model, with what
// stayed unknown said in words. Live probing reads this machine; offline inputs read the
// dumps a user sends in (and never mix with this machine's state).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "commbench/topology/node_topology.hpp"

namespace commbench {

// A GPU as the CUDA runtime reports it (the app supplies a lister when it is built with CUDA).
struct CudaGpu {
  std::string bus_id;  // lower case, "0000:18:00.0"
  std::string model;
  int sm = 0;
};

struct ProbeOptions {
  std::string hwloc_xml;      // --hwloc-xml: an hwloc XML export instead of this machine
  std::string sysfs_root;     // --sysfs-root: a tree shaped like /sys for NIC ports
  std::string nccl_topo_xml;  // --nccl-topo-xml: NCCL's NCCL_TOPO_DUMP_FILE output
  // Lists CUDA devices; empty function = this build has no CUDA. Returns the devices, or
  // sets `why_none` when it could not list any.
  std::function<std::vector<CudaGpu>(std::string& why_none)> cuda_gpus;
  bool offline() const { return !hwloc_xml.empty() || !nccl_topo_xml.empty(); }
};

// Throws UsageError for unreadable or malformed offline inputs (naming the flag or file);
// a source missing at run time (no hwloc, no NVML, no RDMA device) only adds to `unknowns`.
NodeTopology probe_node(const ProbeOptions& options);

// Attaches NICs to the PCI tree by bus id and fills NUMA/CPU locality from it.
void attach_to_pci_tree(NodeTopology& node);

}  // namespace commbench
