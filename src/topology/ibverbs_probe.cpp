#include "commbench/topology/ibverbs_probe.hpp"

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "commbench/config.hpp"
#include "commbench/topology/link_spec.hpp"
#include "commbench/topology/sysfs_nics.hpp"

#if COMMBENCH_HAVE_IBVERBS
#include <infiniband/verbs.h>
#endif

namespace commbench {

int ib_width_lanes(unsigned active_width) {
  switch (active_width) {
    case 1: return 1;
    case 2: return 4;
    case 4: return 8;
    case 8: return 12;
    case 16: return 2;
    default: return 0;
  }
}

IbSpeed ib_speed(unsigned active_speed, unsigned active_speed_ex) {
  // The extended field uses the same bit values and only adds higher ones (XDR = 256).
  const unsigned code = active_speed_ex != 0 ? active_speed_ex : active_speed;
  const char* name = nullptr;
  switch (code) {
    case 1: name = "SDR"; break;
    case 2: name = "DDR"; break;
    case 4: name = "QDR"; break;
    case 8: name = "FDR10"; break;
    case 16: name = "FDR"; break;
    case 32: name = "EDR"; break;
    case 64: name = "HDR"; break;
    case 128: name = "NDR"; break;
    case 256: name = active_speed_ex != 0 ? "XDR" : nullptr; break;
    default: break;
  }
  if (name == nullptr) return {};
  // Lane rates live in one table (link_spec), shared with the sysfs and spec paths.
  return {name, infiniband_lane_gbit(name).value_or(0.0)};
}

std::string ib_port_state_name(unsigned state) {
  switch (state) {
    case 1: return "DOWN";
    case 2: return "INIT";
    case 3: return "ARMED";
    case 4: return "ACTIVE";
    case 5: return "ACTIVE_DEFER";
    default: return "";
  }
}

std::string ib_phys_state_name(unsigned phys_state) {
  switch (phys_state) {
    case 1: return "Sleep";
    case 2: return "Polling";
    case 3: return "Disabled";
    case 4: return "PortConfigurationTraining";
    case 5: return "LinkUp";
    case 6: return "LinkErrorRecovery";
    case 7: return "Phy Test";
    default: return "";
  }
}

std::string ib_link_layer_name(unsigned link_layer) {
  switch (link_layer) {
    case 1: return "InfiniBand";
    case 2: return "Ethernet";
    default: return "";
  }
}

#if COMMBENCH_HAVE_IBVERBS

namespace {

std::string failure(const std::string& device, const char* call, int error) {
  return "libibverbs: " + device + ": " + call + " failed (" + std::strerror(error) + ")";
}

// The calls return an errno value, or -1 with errno set, depending on provider and version.
int error_of(int rc) { return rc > 0 ? rc : (errno != 0 ? errno : EIO); }

NicPort port_from_attr(int number, const ibv_port_attr& attr) {
  NicPort port;
  port.port = number;
  port.state_code = static_cast<int>(attr.state);
  port.state = ib_port_state_name(attr.state);
  port.physical_state = ib_phys_state_name(attr.phys_state);
  // Drivers that predate the field leave it unspecified (0); they were all InfiniBand.
  port.link_layer = attr.link_layer == IBV_LINK_LAYER_UNSPECIFIED ? "InfiniBand" : ib_link_layer_name(attr.link_layer);
  port.lanes = ib_width_lanes(attr.active_width);
  const IbSpeed speed = ib_speed(attr.active_speed, ib_extended_speed(attr));
  port.speed = speed.name;
  port.rate_gbit = port.lanes * speed.gbit_per_lane;
  return port;
}

Nic query_device(ibv_device* device, std::vector<std::string>& unknowns) {
  Nic nic;
  nic.name = ibv_get_device_name(device);
  nic.source = "ibverbs";
  errno = 0;
  ibv_context* context = ibv_open_device(device);
  if (context == nullptr) {
    unknowns.push_back(failure(nic.name, "ibv_open_device", errno != 0 ? errno : EIO));
    return nic;
  }
  ibv_device_attr device_attr{};
  errno = 0;
  if (const int rc = ibv_query_device(context, &device_attr); rc != 0) {
    unknowns.push_back(failure(nic.name, "ibv_query_device", error_of(rc)));
  } else {
    for (int number = 1; number <= device_attr.phys_port_cnt; ++number) {
      ibv_port_attr port_attr{};
      errno = 0;
      if (const int rc = ibv_query_port(context, static_cast<uint8_t>(number), &port_attr); rc != 0) {
        unknowns.push_back(fmt::format("{} on port {}", failure(nic.name, "ibv_query_port", error_of(rc)), number));
        continue;
      }
      nic.ports.push_back(port_from_attr(number, port_attr));
    }
  }
  ibv_close_device(context);
  return nic;
}

}  // namespace

bool probe_ibverbs(NodeTopology& node) {
  int count = 0;
  errno = 0;
  ibv_device** devices = ibv_get_device_list(&count);
  if (devices == nullptr) {
    // ENOSYS: the kernel has no RDMA stack loaded, so there is nothing to list.
    node.unknowns.push_back(errno == ENOSYS ? std::string("libibverbs: no RDMA devices")
                                            : "libibverbs: ibv_get_device_list failed (" +
                                                  std::string(std::strerror(errno != 0 ? errno : EIO)) + ")");
    return false;
  }
  std::vector<Nic> nics;
  for (int i = 0; i < count && devices[i] != nullptr; ++i) nics.push_back(query_device(devices[i], node.unknowns));
  ibv_free_device_list(devices);
  if (nics.empty()) {
    node.unknowns.push_back("libibverbs: no RDMA devices");
    return false;
  }
  merge_nics(node, std::move(nics));
  return true;
}

#else

bool probe_ibverbs(NodeTopology& node) {
  node.unknowns.push_back("libibverbs: not in this build");
  return false;
}

#endif

}  // namespace commbench
