// What one node is made of, as far as communication is concerned: the PCI tree with its
// bridges, the GPUs and NICs in it, the NVLinks between GPUs and switches, NUMA nodes
// and CPU affinity. Every probe (hwloc live or from XML, NCCL's topology dump, NVML,
// libibverbs, sysfs) fills parts of this one plain model, so classification, the matrix,
// the bandwidth model and the cross-node comparison never care where a fact came from.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace commbench {

enum class PciKind {
  host_bridge,  // the root complex side: parent is a CPU/NUMA locality, not a PCI object
  bridge,       // a PCI-to-PCI bridge (a switch port or a root port)
  device,       // an endpoint: GPU, NIC, NVSwitch, NVMe, ...
};

struct PciObject {
  PciKind kind = PciKind::device;
  int parent = -1;          // index into NodeTopology::pci; -1 when attached to a CPU locality
  int numa = -1;            // NUMA node (OS index) of the locality this tree hangs off; -1 unknown
  std::string bus_id;       // "0000:34:00.0"; empty for host bridges that have none
  unsigned class_code = 0;  // base class << 8 | subclass, e.g. 0x0302 (3D controller), 0x0207 (InfiniBand)
  unsigned vendor = 0;      // 0x10de NVIDIA, 0x15b3 Mellanox
  unsigned device_id = 0;
  std::string subtype;      // "NVSwitch" when the source says so
  double link_gbps = 0;     // bandwidth of the link to the parent, per direction; 0 unknown
  int link_generation = 0;  // PCIe generation of that link; 0 unknown
  int link_width = 0;       // lanes; 0 unknown
};

// Per-pair P2P capability as NVML reports it (nvmlDeviceGetP2PStatus).
enum class Capability { unknown, yes, no };

struct Gpu {
  int index = 0;       // order on the node (PCI bus order, as CUDA enumerates by default)
  int pci = -1;        // index into NodeTopology::pci; -1 when the source has no PCI tree
  std::string bus_id;  // "0000:34:00.0" (lower case)
  std::string model;   // "NVIDIA H100 80GB HBM3"
  int numa = -1;
  std::vector<int> cpus;      // OS indexes of the CPUs local to the GPU
  int sm = 0;                 // compute capability x 10 (90 for H100); 0 unknown
  int nvlink_generation = 0;  // 1..5; 0 unknown or no NVLink
  int pcie_generation_current = 0, pcie_generation_max = 0;
  int pcie_width_current = 0, pcie_width_max = 0;
  std::string source;  // "hwloc", "nccl-topo-xml", "nvml", "cuda"
  // True when the GPU is an NVLink part (SXM) but the source cannot record NVLink (an
  // hwloc export without NVML): its GPU pairs are then unknown, never PCIe-only.
  bool nvlinks_unrecorded = false;
};

enum class NvlinkPeer { gpu, nvswitch, cpu, unknown };

// Links of one GPU that go to the same remote object, counted together.
struct NvlinkGroup {
  int gpu = 0;                // Gpu::index
  std::string remote_bus_id;  // the peer's PCI bus id ("" when unknown)
  NvlinkPeer peer = NvlinkPeer::unknown;
  int links = 0;
  double gbps_per_link = 0;  // spec, per direction
};

struct P2pStatus {
  int gpu_a = 0, gpu_b = 0;
  Capability read = Capability::unknown, write = Capability::unknown;
  Capability atomics = Capability::unknown, nvlink = Capability::unknown;
};

struct NicPort {
  int port = 1;
  int state_code = 0;          // 4 = ACTIVE
  std::string state;           // "ACTIVE", "DOWN"
  std::string physical_state;  // "LinkUp", "Disabled"
  std::string link_layer;      // "InfiniBand" or "Ethernet"
  double rate_gbit = 0;        // e.g. 400
  int lanes = 0;               // 4 for 4X; 0 unknown
  std::string speed;           // "NDR"; empty when unknown
  bool active() const { return state_code == 4; }
  double bandwidth_gbps() const { return rate_gbit / 8; }
};

struct Nic {
  std::string name;  // RDMA device ("mlx5_0") or network interface ("eth0")
  int pci = -1;
  std::string bus_id;
  int numa = -1;
  std::vector<int> cpus;
  std::vector<std::string> netdevs;  // "ibp12s0" ...
  std::vector<NicPort> ports;
  std::string source;  // "ibverbs", "sysfs", "hwloc", "nccl-topo-xml"
  bool rdma = true;    // false for a plain network interface (/sys/class/net) without RDMA
  std::uint64_t guid = 0;  // node GUID, where the source gives it (NCCL's dump); 0 unknown
};

// The node's CPU type as the sources name it. NCCL plans traffic between sockets with one
// figure per CPU generation (topology/cpu_interconnect), so the model needs it to say what
// a ring crossing sockets can carry.
struct CpuType {
  std::string architecture;  // "x86_64", "aarch64" (NCCL: "arm64"), "ppc64le" (NCCL: "ppc64"); empty unknown
  std::string vendor;        // CPUID vendor: "GenuineIntel", "AuthenticAMD", "CentaurHauls"; empty unknown
  int family = -1;           // CPUID family number; -1 unknown
  int model = -1;            // CPUID model number; -1 unknown
};

struct NumaNode {
  int os_index = 0;
  std::vector<int> cpus;
};

// How much of the PCI tree a source records. hwloc and sysfs record every bridge: host
// bridges, root ports, and both ports of a PCIe switch. NCCL's dump keeps one <pci> per
// PCIe switch (its upstream port) and leaves out downstream ports, root ports and host
// bridges, so a bridge there stands for a whole switch and host bridges are unknown.
enum class PciTreeDetail { every_bridge, switches_only };

struct NodeTopology {
  std::string hostname;
  PciTreeDetail pci_detail = PciTreeDetail::every_bridge;
  CpuType cpu_type;
  std::vector<NumaNode> numa_nodes;
  std::vector<PciObject> pci;
  std::vector<Gpu> gpus;
  std::vector<NvlinkGroup> nvlinks;
  std::vector<P2pStatus> p2p;
  std::vector<Nic> nics;
  std::vector<std::string> sources;   // what was read: "hwloc 2.9.0 (this machine)", "sysfs /sys"
  std::vector<std::string> unknowns;  // what could not be known and why, one line each
};

}  // namespace commbench
