// NICs as Linux shows them under /sys: the fallback when libibverbs says nothing, and the
// offline input (--sysfs-root) when a tree copied from another node is all there is.
#pragma once

#include <string>
#include <vector>

#include "commbench/topology/node_topology.hpp"

namespace commbench {

// Every <root>/class/infiniband/<dev> with its ports (read_sysfs_ports), and every
// <root>/class/net/<if> that has a `device` entry and is not a netdev of one of those RDMA
// devices, as an Ethernet Nic with one port 1.
//  - bus_id: the basename of the `device` symlink target when it reads like a PCI address;
//    otherwise (virtio2, usb ports) the nearest PCI address among its resolved ancestors;
//    "" when `device` is a plain directory or nothing PCI-like is found. The target need
//    not exist (fixtures keep dangling links).
//  - numa: <dev>/device/numa_node; -1 when absent or "-1".
//  - netdevs: the names under <dev>/device/net/, sorted.
//  - Ethernet port: rate_gbit from `speed` (Mb/s; "-1", absent or unreadable = unknown, 0),
//    `operstate` "up" -> state_code 4 "ACTIVE" with physical_state "LinkUp", any other
//    known operstate -> 1 "DOWN" with physical_state "" (sysfs has no physical state).
// Sorted by name, source "sysfs". A missing tree means no NICs. Garbage in a file is a
// UsageError naming it: "<path>: 'fast' is not a link speed (expected Mb/s, e.g. '25000')".
std::vector<Nic> read_sysfs_nics(const std::string& sysfs_root = "/sys");

// Merges `nics` into node.nics by name. A NIC not there yet is appended as it is. For one
// that is, fields the node does not know yet are filled (bus_id "", numa/pci -1, cpus
// empty), netdevs are united, and ports replace ports only when the existing NIC has none:
// the first probe that saw ports (libibverbs before sysfs) stays authoritative.
void merge_nics(NodeTopology& node, std::vector<Nic> nics);

}  // namespace commbench
