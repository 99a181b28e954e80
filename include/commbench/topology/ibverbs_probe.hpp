// RDMA devices and their ports as libibverbs reports them: the live view of what a port
// negotiated (width, speed, state), which sysfs only shows as text.
#pragma once

#include <string>

#include "commbench/topology/node_topology.hpp"

namespace commbench {

// Adds every device of ibv_get_device_list with its ports (ibv_open_device,
// ibv_query_device, ibv_query_port) to node.nics, merged by device name (merge_nics), source
// "ibverbs"; bus ids and netdevs are left to sysfs or hwloc, and node.sources to the caller
// (as for read_sysfs_nics). Returns true when it added devices. Returns false and appends
// one line to node.unknowns when there is nothing to report, so the caller falls back to sysfs:
//   "libibverbs: not in this build"                        (built without libibverbs)
//   "libibverbs: no RDMA devices"                          (an empty list, or ENOSYS:
//                                                           no RDMA stack in the kernel)
//   "libibverbs: ibv_get_device_list failed (<strerror>)"  (no list at all)
// A device that cannot be opened or queried is still added, by name and without ports,
// with "libibverbs: <dev>: <call> failed (<strerror>)" in node.unknowns.
bool probe_ibverbs(NodeTopology& node);

// ibv_port_attr::active_width -> lanes: 1 -> 1, 2 -> 4, 4 -> 8, 8 -> 12, 16 -> 2; 0 otherwise.
int ib_width_lanes(unsigned active_width);

struct IbSpeed {
  std::string name;          // "NDR"; empty when the code is unknown
  double gbit_per_lane = 0;  // 100 for NDR
};
// ibv_port_attr::active_speed (1 SDR 2.5, 2 DDR 5, 4 QDR 10, 8 FDR10 10, 16 FDR 14.0625,
// 32 EDR 25, 64 HDR 50, 128 NDR 100 Gb/s per lane). A non-zero active_speed_ex (rdma-core
// since late 2023) takes precedence and is the only way to learn XDR (256, 200 Gb/s per
// lane): the 8-bit field cannot hold it.
IbSpeed ib_speed(unsigned active_speed, unsigned active_speed_ex = 0);

// ibv_port_state: 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE, 5 ACTIVE_DEFER; "" otherwise.
std::string ib_port_state_name(unsigned state);
// phys_state: 1 Sleep, 2 Polling, 3 Disabled, 4 PortConfigurationTraining, 5 LinkUp,
// 6 LinkErrorRecovery, 7 Phy Test; "" otherwise.
std::string ib_phys_state_name(unsigned phys_state);
// link_layer: 1 InfiniBand, 2 Ethernet; "" otherwise (0 is "unspecified", which the probe
// reads as InfiniBand, as drivers older than the field meant).
std::string ib_link_layer_name(unsigned link_layer);

// ibv_port_attr gained active_speed_ex in late 2023 (XDR) with no macro to test for it, so
// the member is looked up on the type: 0 when the headers this was built with lack it.
template <typename PortAttr>
unsigned ib_extended_speed(const PortAttr& attr) {
  if constexpr (requires { attr.active_speed_ex; })
    return static_cast<unsigned>(attr.active_speed_ex);
  else
    return 0;
}

}  // namespace commbench
