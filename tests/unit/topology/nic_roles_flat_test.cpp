// Issue 55: NIC roles where NCCL's dump of a VM hangs every device directly under the CPU,
// so that no NIC shares a PCIe switch with a GPU; the PCI address tells compute ports from
// front-end ones there (docs/topology.md, "NIC roles").
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "commbench/topology/nic_roles.hpp"
#include "commbench/topology/node_comparison.hpp"
#include "nccl_topo_xml_test_support.hpp"

namespace commbench {
namespace {

using nccl_topo_test::kFixtures;

NodeTopology fixture(const std::string& name) { return load_nccl_topo_xml(kFixtures + "/" + name); }

std::vector<std::string> nics_of_role(const NodeTopology& node, NicRole role) {
  const NicRoles roles = nic_roles(node);
  std::vector<std::string> names;
  for (std::size_t n = 0; n < node.nics.size(); ++n)
    if (roles.role[n] == role) names.push_back(node.nics[n].name);
  return names;
}

Nic& nic_named(NodeTopology& node, const std::string& name) {
  for (Nic& nic : node.nics)
    if (nic.name == name) return nic;
  throw std::runtime_error("no NIC " + name);
}

TEST(NicRolesFlat, VmFrontEndPortsAreSetApartByTheirBus) {
  const NodeTopology node = fixture("vm-8xb200-flat.xml");
  ASSERT_EQ(node.gpus.size(), 8u);
  ASSERT_EQ(node.nics.size(), 13u);
  EXPECT_EQ(nics_of_role(node, NicRole::other),
            (std::vector<std::string>{"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_4"}));
  EXPECT_EQ(nics_of_role(node, NicRole::compute).size(), 8u);
  // Before: "mlx5_0 port 1: 100 Gb/s, other ports run at 400 Gb/s", and each front-end port.
  EXPECT_EQ(node_findings(node), std::vector<std::string>{});
  const NicRoles roles = nic_roles(node);
  EXPECT_EQ(roles.apart_because[4],
            "on PCI bus 0000:00 with no GPU, while every GPU has a NIC of this kind on its own bus");
  EXPECT_EQ(roles.compared_within_card[0], "guid 5c25730300d7f0");
  EXPECT_EQ(roles.compared_within_card[3], "guid 5c25730300d7f0");
  EXPECT_EQ(roles.compared_within_card[4], "guid 9c63c00300e4a2");
  EXPECT_EQ(roles.compared_within_card[5], "");
}

TEST(NicRolesFlat, AFrontEndCardsFunctionsInSlotsOfTheirOwnAreOneCardByTheirGuids) {
  NodeTopology node = fixture("vm-8xb200-flat.xml");
  // As a VM may pass each function through: 0000:01:00.0, 0000:02:00.0, ... one slot each.
  for (int function = 0; function < 4; ++function) {
    Nic& nic = nic_named(node, "mlx5_" + std::to_string(function));
    nic.bus_id = "0000:0" + std::to_string(function + 1) + ":00.0";
    node.pci[static_cast<std::size_t>(nic.pci)].bus_id = nic.bus_id;
  }
  nic_named(node, "mlx5_3").ports[0].rate_gbit = 50;
  EXPECT_EQ(node_findings(node), std::vector<std::string>{"mlx5_3 port 1: 50 Gb/s, other ports run at 100 Gb/s"});
  // Without GUIDs each function is a card of its own, and nothing is compared with it.
  for (Nic& nic : node.nics) nic.guid = 0;
  EXPECT_EQ(node_findings(node), std::vector<std::string>{});
  EXPECT_EQ(nic_roles(node).compared_within_card[0], "0000:01:00");
}

TEST(NicRolesFlat, VmSlowPortsAreStillFound) {
  NodeTopology node = fixture("vm-8xb200-flat.xml");
  nic_named(node, "mlx5_10").ports[0].rate_gbit = 200;  // as fast as the front-end 200 GbE card
  nic_named(node, "mlx5_2").ports[0].rate_gbit = 50;    // one port of the 4-port front-end card
  EXPECT_EQ(node_findings(node), (std::vector<std::string>{"mlx5_2 port 1: 50 Gb/s, other ports run at 100 Gb/s",
                                                           "mlx5_10 port 1: 200 Gb/s, other ports run at 400 Gb/s"}));
}

TEST(NicRolesFlat, ThePciDomainSpeaksWhereNoBusIsShared) {
  NodeTopology node = fixture("vm-8xb200-flat.xml");
  // The compute bridges moved to buses of their own within the GPUs' domains.
  for (PciObject& pci : node.pci)
    if (pci.bus_id == "0001:00:05.0" || pci.bus_id == "0002:00:05.0") pci.bus_id.replace(5, 2, "40");
  EXPECT_EQ(nic_roles(node).apart_because[0],
            "on PCI domain 0000 with no GPU, while every GPU has a NIC of this kind on its own domain");
  EXPECT_EQ(nics_of_role(node, NicRole::compute).size(), 8u);
  EXPECT_EQ(node_findings(node), std::vector<std::string>{});
}

TEST(NicRolesFlat, TooFewNicsBesideTheGpusSetNothingApart) {
  NodeTopology node = fixture("vm-8xb200-flat.xml");
  // Three of eight compute ports moved to the front-end domain: five beside eight GPUs
  // still serve one per two GPUs; with only three left, the address is not trusted.
  for (const char* name : {"mlx5_5", "mlx5_6", "mlx5_9"}) {
    Nic& nic = nic_named(node, name);
    node.pci[static_cast<std::size_t>(nic.pci)].parent = node.pci[0].parent;
    node.pci[static_cast<std::size_t>(nic.pci)].bus_id = "0000:02:00.0";
  }
  EXPECT_EQ(nics_of_role(node, NicRole::other).size(), 8u);
  for (const char* name : {"mlx5_7", "mlx5_10"}) {
    Nic& nic = nic_named(node, name);
    node.pci[static_cast<std::size_t>(nic.pci)].bus_id = "0000:03:00.0";
    node.pci[static_cast<std::size_t>(nic.pci)].parent = -1;
  }
  EXPECT_EQ(nics_of_role(node, NicRole::other), std::vector<std::string>{});
}

TEST(NicRolesFlat, BareMetalAndBridgedPcieCardsKeepTheirRoles) {
  EXPECT_EQ(nics_of_role(fixture("dgx-h100.xml"), NicRole::compute).size(), 8u);
  EXPECT_EQ(node_findings(fixture("dgx-h100.xml")), std::vector<std::string>{});
  // NVLink-bridged PCIe cards, NICs on root ports: no switch or address sets a NIC apart;
  // the 100 GbE card of another device is not compute by its kind.
  const NodeTopology bridged = fixture("pcie-nvl-bridged.xml");
  EXPECT_EQ(nics_of_role(bridged, NicRole::compute), (std::vector<std::string>{"mlx5_0", "mlx5_2"}));
  EXPECT_EQ(nics_of_role(bridged, NicRole::other), std::vector<std::string>{"mlx5_1"});
  EXPECT_EQ(node_findings(bridged), std::vector<std::string>{});
}

}  // namespace
}  // namespace commbench
