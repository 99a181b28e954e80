// Which network ports NCCL would use between nodes. A node carries ports of several roles:
// the compute fabric (RDMA NICs of one kind, one per GPU or pair of GPUs), front-end and
// storage NICs (often another link layer or another device, sometimes the compute card
// itself away from the GPUs), management ports, and virtual interfaces (Linux bridges,
// container networks). Only compute ports carry a job's traffic, and a port is only
// degraded against ports of its own role and kind: a 100 GbE storage port next to 400G
// InfiniBand is not a slow compute port.
#pragma once

#include <string>
#include <vector>

#include "commbench/topology/node_topology.hpp"

namespace commbench {

enum class NicRole {
  compute,            // the RDMA fabric NCCL would use (or, without RDMA, the fastest kind of port)
  other,              // a real port of another kind: front-end, storage, management
  virtual_interface,  // a bridge or container interface (lxcbr0, br-*, docker0, veth*)
};

std::string_view to_string(NicRole role);

// Interfaces that software creates (lo, bridges, container networks, tunnels): they
// forward other ports' traffic or none at all.
bool virtual_interface_name(const std::string& name);

struct NicRoles {
  std::vector<NicRole> role;      // one per node.nics entry
  std::vector<std::string> kind;  // one per node.nics entry: "InfiniBand 15b3:1021", "Ethernet 8086:1563"
  std::string compute_kind;       // the kind chosen as the compute fabric; empty when there is none
  // One per node.nics entry: for a NIC of the compute kind that its place sets apart as a
  // front-end or storage port, what about its place says so; empty for every other NIC.
  std::vector<std::string> apart_because;
  // One per node.nics entry: the card whose ports alone a NIC's ports are compared with
  // (nic_card), for the NICs set apart by their PCI address; empty where the whole role
  // and kind are peers.
  std::vector<std::string> compared_within_card;
};

// A NIC's kind: link layer, RDMA or not, and PCI vendor:device when the source gives them.
// Ports of one kind are peers; ports of different kinds are never compared.
std::string nic_kind(const NodeTopology& node, const Nic& nic);

// The compute kind is the RDMA kind with a NIC on a GPU's PCIe switch (PIX/PXB), then the
// one with the most active bandwidth (ties: more ports, then name order); without any RDMA
// port, the non-RDMA kind with the most. Where every GPU has a NIC of the compute kind on
// its PCIe switch, the NICs of that kind with no GPU under their host bridge (in NCCL's
// dump: their top-level switch) are front-end or storage ports, role `other`. Where no NIC
// of that kind shares a PCIe switch with a GPU (a VM's flattened tree, where every device
// hangs under the CPU), the PCI address speaks instead: where every GPU has a NIC of the
// kind on the bus of its top-level object (then: on its PCI domain), and those NICs number
// at least one per two GPUs, the NICs of the kind on a bus (domain) with no GPU are
// `other`. Virtual interfaces never count. docs/topology.md gives the order of evidence.
NicRoles nic_roles(const NodeTopology& node);

// The card a NIC port belongs to, as far as the source says: its node GUID but for the
// lowest byte ("guid 5c25730300d7f0"), where the source gives one; else its PCI bus id
// without the function number ("0000:01:00"); empty where neither is known.
std::string nic_card(const Nic& nic);

// One line per NIC that is not a compute NIC, saying why it is left out ("mlx5_8: Ethernet
// 15b3:1017, not the compute fabric (InfiniBand 15b3:1021): not used between nodes, not
// compared with compute ports"; for a NIC of the compute kind away from the GPUs, that no
// GPU is under its host bridge or PCIe switch).
std::vector<std::string> describe_non_compute_nics(const NodeTopology& node, const NicRoles& roles);

}  // namespace commbench
