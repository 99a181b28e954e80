// What NCCL lets traffic between two CPU sockets (NUMA nodes) carry. A ring of PCIe GPUs
// that spans sockets sends one hop each way over QPI/UPI/xGMI, and NCCL's topology search
// plans that hop with a fixed figure per CPU generation (src/graph/topo.h: AMD_BW,
// SKL_QPI_BW, ...), far below the GPUs' PCIe links. The figure is NCCL's planning number,
// not the interconnect's spec, which depends on the SKU's link count and is not modelled.
#pragma once

#include <optional>
#include <string>

#include "commbench/topology/node_topology.hpp"

namespace commbench {

struct CpuInterconnect {
  std::optional<double> achievable_gbps;  // per direction; nullopt when the CPU type is unknown
  std::string name;                       // "Intel Sapphire Rapids UPI"
  std::string why_unknown;
};

CpuInterconnect nccl_cpu_interconnect(const CpuType& cpu);

}  // namespace commbench
