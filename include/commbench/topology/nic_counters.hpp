// Each NIC's own byte counters, read before and after a timed case so that the case can
// say what every port carried. InfiniBand and RoCE ports count in the port's data counters
// (<sysfs>/class/infiniband/<dev>/ports/<n>/counters/port_xmit_data and port_rcv_data) in
// units of 4 bytes, the InfiniBand specification's "octets divided by 4"; the kernel shows
// the 64-bit extended counters where the adapter has them, else 32-bit ones, which stop
// at their maximum instead of wrapping. Plain network interfaces count in /proc/net/dev,
// which, unlike /sys/class/net, lists the interfaces of the reader's own network
// namespace (a container, a node of the test cluster). RDMA traffic bypasses the kernel,
// so a RoCE port is counted by its RDMA device, never by its netdev.
//
// Reading never throws: a counter sampled in the middle of a measurement that cannot be
// read is reported as such, and the measurement goes on.
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace commbench {

struct NicCounterSources {
  std::string sysfs_root = "/sys";
  std::string proc_net_dev = "/proc/net/dev";
};

struct NicCounterReading {
  std::string device;  // "mlx5_0" (RDMA) or "eth0" (network interface)
  int port = 0;        // the RDMA port; 0 for a network interface
  bool rdma = false;
  std::optional<std::uint64_t> tx_bytes, rx_bytes;  // absent when missing or unreadable
  std::string problem;                              // why a counter is absent: the file and error
};

struct NicCounterSnapshot {
  std::vector<NicCounterReading> nics;  // RDMA ports by device and port, then interfaces by name
};

// Loopback is left out; every other interface is read (roles are decided later).
NicCounterSnapshot read_nic_counters(const NicCounterSources& sources = {});

// What one port carried between two snapshots.
struct NicTraffic {
  std::string device;
  int port = 0;
  bool rdma = false;
  std::optional<std::uint64_t> tx_bytes, rx_bytes;  // absent when it cannot be told
  std::string note;                                 // empty when both were counted plainly; else what happened
  std::uint64_t bytes() const { return tx_bytes.value_or(0) + rx_bytes.value_or(0); }
  bool known() const { return tx_bytes.has_value() && rx_bytes.has_value(); }
};

// Its fields, for the exchange between ranks (backend/typed_exchange.hpp).
template <typename Self, typename Visit>
requires std::same_as<std::remove_const_t<Self>, NicTraffic>
void fields(Self& t, Visit& v) {
  v("device", t.device);
  v("port", t.port);
  v("rdma", t.rdma);
  v("tx", t.tx_bytes);
  v("rx", t.rx_bytes);
  v("note", t.note);
}

// /proc/net/dev's interfaces but loopback, each with its fields after the name (8 receive
// counters, then 8 transmit: bytes, packets, errs, drop, fifo, frame or colls, compressed
// or carrier, multicast or compressed); empty when the file cannot be read.
std::vector<std::pair<std::string, std::vector<std::string>>> proc_net_dev_lines(const std::string& proc_net_dev);

// "mlx5_0:1" for an RDMA port, "eth0" for an interface.
std::string nic_label(const std::string& device, int port, bool rdma);

// One entry per port in either snapshot. A counter that went back is taken as a 32-bit
// wrap when both readings fit in 32 bits (drivers that keep 32-bit netdev statistics),
// else as a reset (unknown); a 32-bit InfiniBand counter at its maximum has stopped
// (unknown); a port in one snapshot only appeared or disappeared during the case.
std::vector<NicTraffic> nic_traffic(const NicCounterSnapshot& before, const NicCounterSnapshot& after);

// One counter's change: bytes, or nullopt with `note` saying why not.
std::optional<std::uint64_t> counter_change(std::uint64_t before, std::uint64_t after, bool rdma, std::string& note);

}  // namespace commbench
