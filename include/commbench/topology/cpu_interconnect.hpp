// What NCCL assumes of the CPU on a path between two GPUs that leaves PCIe switches.
// - Between two CPU sockets (NUMA nodes): a ring of PCIe GPUs that spans sockets sends one
//   hop each way over QPI/UPI/xGMI, and NCCL's topology search plans that hop with a fixed
//   figure per CPU generation (src/graph/topo.h: AMD_BW, SKL_QPI_BW, ...), far below the
//   GPUs' PCIe links. The figure is NCCL's planning number, not the interconnect's spec,
//   which depends on the SKU's link count and is not modelled.
// - Inside one socket's root complex: NCCL counts a GPU-to-GPU flow that turns in an Intel
//   root complex at 6/5 of its rate on the PCIe links, because Intel CPUs split peer
//   traffic into 64-byte TLPs (INTEL_P2P_OVERHEAD in topo.h, charged in search.cc's
//   followPath to paths of type PHB); a Gen4 x16 hop NCCL rates at 24 GB/s then carries 20.
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

// NCCL's INTEL_P2P_OVERHEAD: the PCIe links carry 6/5 of a flow through an Intel root complex.
inline constexpr double kIntelRootComplexCharge = 6.0 / 5.0;

struct RootComplexTraffic {
  // What NCCL charges the PCIe links per byte of a GPU-to-GPU flow through the root
  // complex: 1.2 on Intel x86, 1 on other CPUs; nullopt when the vendor is unknown.
  std::optional<double> pcie_charge;
  std::string why_unknown;
};

RootComplexTraffic nccl_root_complex_traffic(const CpuType& cpu);

}  // namespace commbench
