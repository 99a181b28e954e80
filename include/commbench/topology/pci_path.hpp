// How two devices of a node reach each other, in the vocabulary of `nvidia-smi topo -m`:
// the classification is the first thing an engineer reads to judge whether a GPU pair or
// a GPU and its NIC are well placed.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "commbench/topology/node_topology.hpp"

namespace commbench {

enum class PathClass {
  self,     // X
  nvlink,   // NV#: direct NVLinks, or both GPUs on NVSwitches
  pix,      // both under the same PCIe switch (at most one switch port on each side)
  pxb,      // common ancestor is a PCIe bridge, but a side crosses more than one switch level
  phb,      // common ancestor is a PCIe host bridge (the CPU's root complex)
  node,     // different host bridges, same NUMA node
  sys,      // different NUMA nodes: crosses the SMP interconnect (QPI/UPI/xGMI)
  unknown,  // the sources did not say where one of the devices sits, whether a path
            // crosses a host bridge (NCCL's dump), or whether NVLink joins two GPUs
};

struct Connection {
  PathClass kind = PathClass::unknown;
  int nvlinks = 0;  // for PathClass::nvlink
};

// "X", "NV18", "PIX", ..., "?" for unknown.
std::string to_string(const Connection& connection);

// An endpoint of the matrix: a GPU (index into node.gpus) or a NIC (index into node.nics).
struct Endpoint {
  enum class Kind { gpu, nic } kind = Kind::gpu;
  int index = 0;
};

// PCI-only classification of two objects of node.pci (indexes), with the NUMA node of
// each used when they hang off different host bridges. How many bridges make a second
// switch, and whether NODE can be told from PHB, follow node.pci_detail.
PathClass pci_path_class(const NodeTopology& node, int pci_a, int pci_b);

// Whether the PCI path between two objects turns inside one CPU's root complex: their
// common ancestor is a host bridge, or their trees hang off the same NUMA node (PHB or
// NODE to nvidia-smi, PATH_PHB to NCCL, which does not tell host bridges apart). False
// for a path through a PCIe switch, between sockets, or of unknown placement.
bool turns_in_root_complex(const NodeTopology& node, int pci_a, int pci_b);

// Full classification of two endpoints: NVLink first for GPU pairs (unknown when either
// GPU's NVLinks were not recorded), then the PCI path; two endpoints in one PCI function
// (ports of one NIC) are PIX.
Connection classify(const NodeTopology& node, Endpoint a, Endpoint b);

// NVLinks of one GPU (index into node.gpus): direct to a GPU with this bus id, and in
// total to NVSwitches.
int nvlinks_to_gpu(const NodeTopology& node, int gpu, const std::string& peer_bus_id);
int nvlinks_to_switches(const NodeTopology& node, int gpu);

// The first of `gpus` (indexes into node.gpus) that is an NVLink part whose source could
// not record NVLink (Gpu::nvlinks_unrecorded); none when every GPU's links are known.
std::optional<int> gpu_with_unrecorded_nvlinks(const NodeTopology& node, const std::vector<int>& gpus);

// Per-direction bandwidth of every PCI link between two objects (each object's link to
// its parent, up to but excluding the common ancestor); the smallest known one, or 0 when
// none is known. Used by the bandwidth model for PCIe-only GPU pairs.
double pci_path_bottleneck_gbps(const NodeTopology& node, int pci_a, int pci_b);

}  // namespace commbench
