// Issue 14, defects 5 and 9: ports of other roles (storage, front-end, management, virtual)
// are neither failed against the compute ports nor counted as inter-node bandwidth.
#include <gtest/gtest.h>

#include "commbench/topology/bandwidth_model.hpp"
#include "commbench/topology/nic_roles.hpp"
#include "commbench/topology/node_comparison.hpp"

namespace commbench {
namespace {

// A NIC as a source without port state or link layer (NCCL's dump) or with them (sysfs)
// shows it; `device` 0 leaves the NIC without a PCI object.
void add_nic(NodeTopology& node, const std::string& name, unsigned device, double gbit, const std::string& link_layer,
             bool rdma = true) {
  Nic nic;
  nic.name = name;
  nic.rdma = rdma;
  if (device != 0) {
    PciObject pci;
    pci.vendor = device >> 16;
    pci.device_id = device & 0xffff;
    pci.bus_id = "0000:" + std::to_string(10 + node.pci.size()) + ":00.0";
    nic.pci = static_cast<int>(node.pci.size());
    nic.bus_id = pci.bus_id;
    node.pci.push_back(pci);
  }
  NicPort port;
  port.state_code = 4;
  port.state = "ACTIVE";
  port.rate_gbit = gbit;
  port.link_layer = link_layer;
  nic.ports = {port};
  node.nics.push_back(nic);
}

constexpr unsigned kConnectX7 = 0x15b31021, kConnectX6Dx = 0x15b3101d, kBlueField3 = 0x15b3a2dc;
constexpr unsigned kIntelX540 = 0x80861528, kIntelI210 = 0x80861533;

TEST(NicRoles, StorageEthernetNextToInfinibandIsNotAFailure) {
  NodeTopology node;
  for (int n = 0; n < 8; ++n) add_nic(node, "mlx5_" + std::to_string(n), kConnectX7, 200, "");
  add_nic(node, "mlx5_8", kConnectX6Dx, 100, "");  // storage, link layer unknown as in a dump
  // Before: "mlx5_8 port 1: 100 Gb/s, other  ports run at 200 Gb/s" (exit 1, double space).
  EXPECT_EQ(node_findings(node), std::vector<std::string>{});
  const NicRoles roles = nic_roles(node);
  EXPECT_EQ(roles.compute_kind, "link layer unknown 15b3:1021");
  EXPECT_EQ(roles.role[8], NicRole::other);
  EXPECT_EQ(describe_non_compute_nics(node, roles),
            std::vector<std::string>{"mlx5_8: link layer unknown 15b3:101d, not the compute fabric (link layer unknown "
                                     "15b3:1021): not used between nodes, not compared with compute ports"});
}

TEST(NicRoles, FrontEndNicsNextToComputeNics) {
  NodeTopology node;
  for (int n = 0; n < 8; ++n) add_nic(node, "mlx5_" + std::to_string(n), kConnectX7, 400, "InfiniBand");
  add_nic(node, "mlx5_8", kBlueField3, 200, "Ethernet");
  add_nic(node, "mlx5_9", kBlueField3, 100, "Ethernet");  // a slower port of the front-end kind
  EXPECT_EQ(node_findings(node),
            std::vector<std::string>{"mlx5_9 port 1: 100 Gb/s, other Ethernet ports run at 200 Gb/s"});
}

TEST(NicRoles, ManagementPortNextToTenGigBridges) {
  // DGX-1 as an NCCL dump lists it: 10 GbE ports, a 1 GbE management port, a Linux bridge.
  NodeTopology node;
  add_nic(node, "enp1s0f0", kIntelX540, 10, "");
  add_nic(node, "enp1s0f1", kIntelX540, 10, "");
  add_nic(node, "eno1", kIntelI210, 1, "");
  add_nic(node, "lxcbr0", 0, 10, "");
  EXPECT_EQ(node_findings(node), std::vector<std::string>{});
  const NicRoles roles = nic_roles(node);
  EXPECT_EQ(roles.role[3], NicRole::virtual_interface);
  EXPECT_EQ(roles.role[2], NicRole::other);
}

TEST(NicRoles, DegradedComputePortIsStillFound) {
  NodeTopology node;
  for (int n = 0; n < 4; ++n) add_nic(node, "mlx5_" + std::to_string(n), kConnectX7, n == 1 ? 200 : 400, "");
  node.nics[3].ports[0].state_code = 1;
  node.nics[3].ports[0].state = "DOWN";
  // No double space where the link layer is unknown.
  EXPECT_EQ(node_findings(node),
            (std::vector<std::string>{"mlx5_1 port 1: 200 Gb/s, other ports run at 400 Gb/s", "mlx5_3 port 1: DOWN"}));
}

TEST(NicRoles, InterNodeBandwidthCountsComputePortsOnly) {
  NodeTopology node;
  for (int n = 0; n < 8; ++n) add_nic(node, "mlx5_" + std::to_string(n), kConnectX7, 400, "InfiniBand");
  add_nic(node, "mlx5_8", kBlueField3, 200, "Ethernet");
  add_nic(node, "lxcbr0", 0, 10, "Ethernet");
  Gpu gpu;
  gpu.bus_id = "0000:99:00.0";
  node.gpus = {gpu};
  JobLayout layout;
  layout.nodes = 2;
  layout.gpu_bus_ids = {gpu.bus_id};
  // Before: 8 x 50 + 25 + 1.25 = 426.25.
  const PathBudget budget = inter_node_budget(node, layout);
  EXPECT_DOUBLE_EQ(*budget.spec_gbps, 400.0);
  EXPECT_EQ(budget.description,
            "8 active NIC ports (mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7) = 400 GB/s per node");
}

}  // namespace
}  // namespace commbench
