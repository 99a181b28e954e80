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

// A PCI object of `kind` below `parent` (-1: a host bridge on NUMA node `numa`); its index.
int add_pci(NodeTopology& node, PciKind kind, int parent, int numa = 0) {
  PciObject pci;
  pci.kind = kind;
  pci.parent = parent;
  pci.numa = numa;
  pci.bus_id = kind == PciKind::host_bridge ? "" : "0000:" + std::to_string(10 + node.pci.size()) + ":00.0";
  node.pci.push_back(pci);
  return static_cast<int>(node.pci.size()) - 1;
}

void add_gpu(NodeTopology& node, int parent) {
  Gpu gpu;
  gpu.index = static_cast<int>(node.gpus.size());
  gpu.pci = add_pci(node, PciKind::device, parent);
  gpu.bus_id = node.pci.back().bus_id;
  node.gpus.push_back(gpu);
}

// The last NIC added (add_nic) moved below `parent` in the PCI tree.
void place_last_nic(NodeTopology& node, int parent) {
  node.pci[static_cast<std::size_t>(node.nics.back().pci)].parent = parent;
}

// Issue 38: GPU i and compute NIC i share PCIe switch i (host bridge -> root port ->
// switch); the front-end NICs hang off a host bridge of their own.
NodeTopology gpus_with_nics_on_their_switches(int pairs, double gbit, unsigned device) {
  NodeTopology node;
  for (int i = 0; i < pairs; ++i) {
    const int host = add_pci(node, PciKind::host_bridge, -1);
    const int root_port = add_pci(node, PciKind::bridge, host);
    const int upstream = add_pci(node, PciKind::bridge, root_port);
    add_gpu(node, add_pci(node, PciKind::bridge, upstream));
    add_nic(node, "mlx5_" + std::to_string(4 + i), device, gbit, "Ethernet");
    place_last_nic(node, add_pci(node, PciKind::bridge, upstream));
  }
  return node;
}

TEST(NicRoles, SameCardAwayFromTheGpusIsAFrontEndPort) {
  NodeTopology node = gpus_with_nics_on_their_switches(4, 400, kConnectX7);
  const int front_end = add_pci(node, PciKind::bridge, add_pci(node, PciKind::host_bridge, -1));
  for (int n = 0; n < 4; ++n) {  // four functions of one 100 GbE card, the compute NICs' own device
    add_nic(node, "mlx5_" + std::to_string(n), kConnectX7, 100, "Ethernet");
    place_last_nic(node, front_end);
  }
  // Before: "mlx5_0 port 1: 100 Gb/s, other Ethernet ports run at 400 Gb/s", and so on for each.
  EXPECT_EQ(node_findings(node), std::vector<std::string>{});
  const NicRoles roles = nic_roles(node);
  EXPECT_EQ(roles.compute_kind, "Ethernet 15b3:1021");
  EXPECT_EQ(roles.role, (std::vector<NicRole>{NicRole::compute, NicRole::compute, NicRole::compute, NicRole::compute,
                                              NicRole::other, NicRole::other, NicRole::other, NicRole::other}));
  EXPECT_EQ(describe_non_compute_nics(node, roles).front(),
            "mlx5_0: Ethernet 15b3:1021, no GPU under its host bridge or PCIe switch, while every GPU has a NIC of "
            "this kind on its own switch: front-end or storage, not used between nodes, not compared with compute "
            "ports");
  // Each role is still compared within itself: a front-end function at 50, a compute NIC at 200.
  node.nics[5].ports[0].rate_gbit = 50;
  node.nics[1].ports[0].rate_gbit = 200;
  EXPECT_EQ(node_findings(node),
            (std::vector<std::string>{"mlx5_5 port 1: 200 Gb/s, other Ethernet ports run at 400 Gb/s",
                                      "mlx5_1 port 1: 50 Gb/s, other Ethernet ports run at 100 Gb/s"}));
}

TEST(NicRoles, ACardUnlikeTheGpuNearOnesIsNotComputeHoweverFast) {
  NodeTopology node = gpus_with_nics_on_their_switches(2, 200, kConnectX7);
  const int front_end = add_pci(node, PciKind::bridge, add_pci(node, PciKind::host_bridge, -1));
  for (int n = 0; n < 4; ++n) {  // 4 x 200 GbE of another device: more bandwidth than the 2 x 200 compute NICs
    add_nic(node, "mlx5_" + std::to_string(n), kBlueField3, 200, "Ethernet");
    place_last_nic(node, front_end);
  }
  const NicRoles roles = nic_roles(node);
  EXPECT_EQ(roles.compute_kind, "Ethernet 15b3:1021");
  EXPECT_EQ(roles.role[2], NicRole::other);
}

TEST(NicRoles, NicsOnRootPortsAreAllComputeOnAPcieServer) {
  // As on pcie-4gpu.xml, no NIC shares a switch with a GPU, so the NIC under a host bridge
  // of its own (mlx5_0, NODE to the GPUs) is not set apart for having no GPU beside it.
  NodeTopology node;
  const int host_a = add_pci(node, PciKind::host_bridge, -1);
  const int gpu_switch = add_pci(node, PciKind::bridge, add_pci(node, PciKind::bridge, host_a));
  add_gpu(node, add_pci(node, PciKind::bridge, gpu_switch));
  add_gpu(node, add_pci(node, PciKind::bridge, gpu_switch));
  add_nic(node, "mlx5_0", kConnectX7, 200, "InfiniBand");
  place_last_nic(node, add_pci(node, PciKind::bridge, add_pci(node, PciKind::host_bridge, -1)));
  add_nic(node, "mlx5_1", kConnectX7, 200, "InfiniBand");
  place_last_nic(node, add_pci(node, PciKind::bridge, host_a));
  const NicRoles roles = nic_roles(node);
  EXPECT_EQ(roles.role, (std::vector<NicRole>{NicRole::compute, NicRole::compute}));
  EXPECT_TRUE(describe_non_compute_nics(node, roles).empty());
}

TEST(NicRoles, ANicAwayFromTheGpusServesAGpuWithoutOneOnItsSwitch) {
  // GPU 1 has no NIC on its switch and takes one of its socket's, here a NIC on a root port
  // under another host bridge: that NIC is still compute, and still compared as one.
  NodeTopology node = gpus_with_nics_on_their_switches(1, 200, kConnectX6Dx);
  const int host = add_pci(node, PciKind::host_bridge, -1);
  add_gpu(node, add_pci(node, PciKind::bridge, add_pci(node, PciKind::bridge, add_pci(node, PciKind::bridge, host))));
  add_nic(node, "mlx5_0", kConnectX6Dx, 100, "Ethernet");
  place_last_nic(node, add_pci(node, PciKind::bridge, add_pci(node, PciKind::host_bridge, -1)));
  EXPECT_EQ(nic_roles(node).role, (std::vector<NicRole>{NicRole::compute, NicRole::compute}));
  EXPECT_EQ(node_findings(node),
            std::vector<std::string>{"mlx5_0 port 1: 100 Gb/s, other Ethernet ports run at 200 Gb/s"});
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
