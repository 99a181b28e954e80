// InfiniBand/RoCE ports as Linux shows them under /sys/class/infiniband: the fallback
// (and the offline input, --sysfs-root) for when libibverbs is missing or says less.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace commbench {

struct PortRate {
  double gbit = 0;    // the number before "Gb/sec"
  int lanes = 0;      // from "(4X HDR)"; 0 when the kernel printed no width
  std::string speed;  // "HDR", "NDR", ...; empty when not printed
};

// Parses a `rate` file: "200 Gb/sec (4X HDR)", "56 Gb/sec (4X FDR)", "2.5 Gb/sec (1X SDR)",
// "100 Gb/sec (2X HDR)", "25 Gb/sec" (Ethernet). Throws UsageError naming `where` for
// anything else.
PortRate parse_port_rate(const std::string& text, const std::string& where);

// Parses `state` / `phys_state` files: "4: ACTIVE", "5: LinkUp" -> {4, "ACTIVE"}.
struct PortState {
  int code = 0;
  std::string name;
};
PortState parse_port_state(const std::string& text, const std::string& where);

struct SysfsPort {
  std::string device;  // mlx5_0
  int port = 0;
  PortRate rate;
  PortState state;
  PortState physical_state;
  std::string link_layer;     // "InfiniBand" or "Ethernet"
  double bandwidth_gbps = 0;  // rate.gbit / 8
  bool active() const { return state.code == 4; }
};

// Every port under <sysfs_root>/class/infiniband/*/ports/*, sorted by device and port.
// A missing directory means no ports (empty). Garbage in a file is a UsageError naming it.
std::vector<SysfsPort> read_sysfs_ports(const std::string& sysfs_root = "/sys");

}  // namespace commbench
