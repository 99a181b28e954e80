// What can go wrong on a NIC without its byte counters saying so: the error counters, and
// an RDMA port's state and rate, read between two moments so that a soak can say what
// changed while a node or link dipped. InfiniBand and RoCE ports:
// <sysfs>/class/infiniband/<dev>/ports/<n>/counters/ symbol_error, link_downed,
// link_error_recovery, port_rcv_errors, excessive_buffer_overrun_errors,
// local_link_integrity_errors, port_xmit_discards; ports/<n>/state ("4: ACTIVE") and
// rate ("400 Gb/sec (4X NDR)"). Network interfaces: /proc/net/dev's receive and transmit
// errors and drops and the carrier errors (the reader's own network namespace).
//
// Reading never throws: a counter that cannot be read is left out, and a change is only
// told between two readings of the same counter.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "commbench/topology/nic_counters.hpp"

namespace commbench {

struct NicHealthReading {
  std::string label;                              // "mlx5_0:1" or "eth0"
  std::map<std::string, std::uint64_t> counters;  // by the kernel's name ("symbol_error", "rx_dropped")
  std::string state, rate;                        // an RDMA port's; empty for an interface
};

struct NicHealthSnapshot {
  std::vector<NicHealthReading> nics;  // by label
};

NicHealthSnapshot read_nic_health(const NicCounterSources& sources = {});

// One line per change: "mlx5_0:1 symbol_error +12", "mlx5_0:1 state ACTIVE -> DOWN",
// "mlx5_0:1 rate 400 Gb/sec (4X NDR) -> 200 Gb/sec (2X NDR)", "eth0 rx_dropped +3",
// "eth0 rx_errors reset" (went back), "ib1 appeared", "mlx5_1:1 disappeared".
std::vector<std::string> nic_health_changes(const NicHealthSnapshot& before, const NicHealthSnapshot& after);

}  // namespace commbench
