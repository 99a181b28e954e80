// Which NICs carry a GPU's send/recv between nodes: NCCL gives each GPU its share of the
// NICs on its switch (ncclTopoGetLocalNetType), not all of them, and GPUDirect RDMA moves
// every byte through the GPU's own PCIe link. NDv4 (Azure/azhpc-images ndv4-topo.xml):
// two A100s and two HDR NICs per switch, so a GPU of an 8-GPU job sends through one NIC.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "commbench/topology/gpu_nics.hpp"
#include "commbench/topology/pci_path.hpp"
#include "model_fixtures.hpp"

namespace commbench {
namespace {

using test::gpu_layout;
using test::model_fixture;
using test::ports_active;

std::vector<std::string> nic_names(const NodeTopology& node, const std::vector<int>& nics) {
  std::vector<std::string> names;
  for (const int n : nics) names.push_back(node.nics[static_cast<std::size_t>(n)].name);
  return names;
}

int gpu_with_device_number(const NodeTopology& node, int index) {
  for (std::size_t g = 0; g < node.gpus.size(); ++g)
    if (node.gpus[g].index == index) return static_cast<int>(g);
  ADD_FAILURE() << "no GPU " << index;
  return 0;
}

std::vector<int> all_gpu_positions(const NodeTopology& node) {
  std::vector<int> positions;
  for (std::size_t g = 0; g < node.gpus.size(); ++g) positions.push_back(static_cast<int>(g));
  return positions;
}

TEST(GpuNics, EachGpuOfAFullJobGetsOneOfItsSwitchsTwoNics) {
  const NodeTopology node = model_fixture("ndv4-a100-nvswitch.xml");
  const NicRoles roles = nic_roles(node);
  std::set<std::string> used;
  for (int device = 0; device < 8; ++device) {
    const int gpu = gpu_with_device_number(node, device);
    EXPECT_EQ(nic_names(node, nearest_compute_nics(node, roles, gpu)).size(), 2u) << "GPU " << device;
    const GpuNics chosen = nccl_nics_of_gpu(node, roles, all_gpu_positions(node), gpu);
    EXPECT_EQ(chosen.local_nics, 2);
    EXPECT_EQ(chosen.sharing_gpus, 2);
    ASSERT_EQ(chosen.nics.size(), 1u) << "GPU " << device;
    used.insert(node.nics[static_cast<std::size_t>(chosen.nics.front())].name);
  }
  // The two GPUs of a switch take different NICs: all eight are used, once each.
  EXPECT_EQ(used.size(), 8u);
  EXPECT_EQ(
      nic_names(node, nccl_nics_of_gpu(node, roles, all_gpu_positions(node), gpu_with_device_number(node, 0)).nics),
      std::vector<std::string>{"mlx5_0"});
  EXPECT_EQ(
      nic_names(node, nccl_nics_of_gpu(node, roles, all_gpu_positions(node), gpu_with_device_number(node, 1)).nics),
      std::vector<std::string>{"mlx5_1"});
}

TEST(GpuNics, AGpuAloneOnItsSwitchTakesBothNics) {
  const NodeTopology node = model_fixture("ndv4-a100-nvswitch.xml");
  const int gpu = gpu_with_device_number(node, 0);
  const GpuNics chosen = nccl_nics_of_gpu(node, nic_roles(node), {gpu}, gpu);
  EXPECT_EQ(chosen.sharing_gpus, 1);
  EXPECT_EQ(nic_names(node, chosen.nics), (std::vector<std::string>{"mlx5_0", "mlx5_1"}));
}

// Four NICs on one switch shared by two GPUs: each GPU takes two, starting where NCCL's
// bit mirror puts it (GPU 1 -> NIC 2), so the GPUs' NICs do not interleave.
TEST(GpuNics, FourNicsOfOneSwitchAreSplitByTheBitMirror) {
  NodeTopology node = model_fixture("ndv4-a100-nvswitch.xml");
  const int gpu0 = gpu_with_device_number(node, 0), gpu1 = gpu_with_device_number(node, 1);
  const int switch_of_gpu0 = node.pci[static_cast<std::size_t>(node.gpus[static_cast<std::size_t>(gpu0)].pci)].parent;
  for (Nic& nic : node.nics)
    if (nic.name == "mlx5_2" || nic.name == "mlx5_3")
      node.pci[static_cast<std::size_t>(nic.pci)].parent = switch_of_gpu0;
  const NicRoles roles = nic_roles(node);
  const std::vector<int> job = {gpu0, gpu1};
  EXPECT_EQ(nic_names(node, nccl_nics_of_gpu(node, roles, job, gpu0).nics),
            (std::vector<std::string>{"mlx5_0", "mlx5_1"}));
  EXPECT_EQ(nic_names(node, nccl_nics_of_gpu(node, roles, job, gpu1).nics),
            (std::vector<std::string>{"mlx5_2", "mlx5_3"}));
}

TEST(GpuNics, SendRecvBetweenNodesIsOneNicPerGpuOnAFullNode) {
  NodeTopology node = model_fixture("ndv4-a100-nvswitch.xml");
  ports_active(node, "InfiniBand");
  const TheoreticalBusbw p2p = theoretical_busbw(Collective::sendrecv, node, gpu_layout(node, 2));
  // One HDR port (25 GB/s; NCCL's 24), not the switch's two ports added up (50).
  EXPECT_DOUBLE_EQ(*p2p.spec_gbps, 25.0);
  EXPECT_NEAR(*p2p.achievable_gbps, 24.0, 1e-9);
  EXPECT_NE(p2p.basis.find("its switch's 2 NICs serve 2 of the job's GPUs"), std::string::npos) << p2p.basis;
}

TEST(GpuNics, OneGpuPerNodeIsBoundByItsOwnPcieLink) {
  NodeTopology node = model_fixture("ndv4-a100-nvswitch.xml");
  ports_active(node, "InfiniBand");
  const JobLayout one_gpu = gpu_layout(node, 2, {gpu_with_device_number(node, 0)});
  const TheoreticalBusbw p2p = theoretical_busbw(Collective::sendrecv, node, one_gpu);
  // Both NICs (2 x 25) behind one Gen4 x16 link: 31.5 on the wire, NCCL's 24.
  EXPECT_NEAR(*p2p.spec_gbps, 31.5, 0.01);
  EXPECT_NEAR(*p2p.achievable_gbps, 24.0, 1e-9);
  EXPECT_NE(p2p.basis.find("NIC mlx5_0,mlx5_1 50 GB/s; GPU 0's PCIe link 31.5"), std::string::npos) << p2p.basis;
}

// A pair-matrix cell between nodes reads against the NIC NCCL gives the sending GPU. A
// port that came up at half rate is no longer GPU 1's: NCCL ranks a GPU's NICs by path
// bandwidth before path type (ncclTopoGetLocal), so GPU 1 moves to mlx5_0 beside GPU 0
// and the slow port carries no NCCL send/recv.
TEST(GpuNics, APairCellIsReadAgainstTheNicNcclGivesItsGpu) {
  NodeTopology node = model_fixture("ndv4-a100-nvswitch.xml");
  ports_active(node, "InfiniBand");
  const JobLayout full = gpu_layout(node, 2);
  const std::string gpu0 = node.gpus[static_cast<std::size_t>(gpu_with_device_number(node, 0))].bus_id;
  const std::string gpu1 = node.gpus[static_cast<std::size_t>(gpu_with_device_number(node, 1))].bus_id;
  const PathBudget healthy = gpu_network_budget(node, full, gpu0);
  EXPECT_DOUBLE_EQ(*healthy.spec_gbps, 25.0);
  EXPECT_EQ(healthy.description.rfind("NIC mlx5_0 25 GB/s", 0), 0u) << healthy.description;
  EXPECT_EQ(gpu_network_budget(node, full, gpu1).description.rfind("NIC mlx5_1 25 GB/s", 0), 0u);
  for (Nic& nic : node.nics)
    if (nic.name == "mlx5_1") nic.ports.front().rate_gbit = 100;  // a port that came up at half rate
  const PathBudget moved = gpu_network_budget(node, full, gpu1);
  EXPECT_DOUBLE_EQ(*moved.spec_gbps, 25.0);
  EXPECT_EQ(moved.description.rfind("NIC mlx5_0 25 GB/s", 0), 0u) << moved.description;
  // A GPU the model does not know is unknown, not a guess.
  const PathBudget missing = gpu_network_budget(node, full, "0000:ff:00.0");
  EXPECT_FALSE(missing.spec_gbps);
  EXPECT_EQ(missing.description, "GPU 0000:ff:00.0 is not in the probed topology");
}

// NDv4 with mlx5_2 moved one switch level below GPU 0's switch: PXB to GPU 0, where
// mlx5_0 and mlx5_1 are PIX.
NodeTopology ndv4_with_a_nic_one_level_down() {
  NodeTopology node = model_fixture("ndv4-a100-nvswitch.xml");
  ports_active(node, "InfiniBand");
  const int gpu0 = gpu_with_device_number(node, 0);
  const int switch_of_gpu0 = node.pci[static_cast<std::size_t>(node.gpus[static_cast<std::size_t>(gpu0)].pci)].parent;
  PciObject lower_switch;
  lower_switch.kind = PciKind::bridge;
  lower_switch.parent = switch_of_gpu0;
  lower_switch.numa = node.pci[static_cast<std::size_t>(switch_of_gpu0)].numa;
  node.pci.push_back(lower_switch);
  for (Nic& nic : node.nics)
    if (nic.name == "mlx5_2")
      node.pci[static_cast<std::size_t>(nic.pci)].parent = static_cast<int>(node.pci.size()) - 1;
  EXPECT_EQ(node.nics[2].name, "mlx5_2");
  EXPECT_EQ(to_string(classify(node, {Endpoint::Kind::gpu, gpu0}, {Endpoint::Kind::nic, 2})), "PXB");
  return node;
}

void narrow_pcie_link_of(NodeTopology& node, const std::string& nic_name, double gbps) {
  for (const Nic& nic : node.nics)
    if (nic.name == nic_name) node.pci[static_cast<std::size_t>(nic.pci)].link_gbps = gbps;
}

// Of paths of the same width, a NIC behind a further switch level (PXB) is not among a
// GPU's nearest when others sit on its own switch (PIX), and the inter-node figures that
// count the NICs near the job's GPUs follow.
TEST(GpuNics, PixNicsComeBeforePxbNicsOfTheSameWidth) {
  NodeTopology node = ndv4_with_a_nic_one_level_down();
  const int gpu0 = gpu_with_device_number(node, 0);
  EXPECT_EQ(nic_names(node, nearest_compute_nics(node, nic_roles(node), gpu0)),
            (std::vector<std::string>{"mlx5_0", "mlx5_1"}));
  const PathBudget between_nodes = inter_node_budget(node, gpu_layout(node, 2, {gpu0}));
  EXPECT_DOUBLE_EQ(*between_nodes.spec_gbps, 50.0) << between_nodes.description;
}

// ncclTopoGetLocal ranks by the path's bandwidth first and its type second: a wider PXB
// path beats narrower PIX ones, and of two PIX NICs the narrower one is not the GPU's.
TEST(GpuNics, TheWidestPathComesFirstThenTheNearestType) {
  NodeTopology node = ndv4_with_a_nic_one_level_down();
  const int gpu0 = gpu_with_device_number(node, 0);
  narrow_pcie_link_of(node, "mlx5_1", 12);
  EXPECT_EQ(nic_names(node, nearest_compute_nics(node, nic_roles(node), gpu0)), std::vector<std::string>{"mlx5_0"});
  narrow_pcie_link_of(node, "mlx5_0", 12);
  EXPECT_EQ(nic_names(node, nearest_compute_nics(node, nic_roles(node), gpu0)), std::vector<std::string>{"mlx5_2"});
}

// The GPUs that share a switch's NICs are ranked the same way, widest path first: a GPU
// whose own link came up narrow is not among them, so its healthy neighbour takes both
// NICs of the switch (sharing by nearness alone would give it one).
TEST(GpuNics, AGpuWithANarrowerPathDoesNotShareTheNics) {
  NodeTopology node = model_fixture("ndv4-a100-nvswitch.xml");
  ports_active(node, "InfiniBand");
  const NicRoles roles = nic_roles(node);
  const int gpu0 = gpu_with_device_number(node, 0);
  const int gpu1 = gpu_with_device_number(node, 1);
  const std::vector<int> job{gpu0, gpu1};
  ASSERT_EQ(nccl_nics_of_gpu(node, roles, job, gpu0).sharing_gpus, 2);
  node.pci[static_cast<std::size_t>(node.gpus[static_cast<std::size_t>(gpu1)].pci)].link_gbps = 12;
  const GpuNics chosen = nccl_nics_of_gpu(node, roles, job, gpu0);
  EXPECT_EQ(chosen.sharing_gpus, 1);
  EXPECT_EQ(nic_names(node, chosen.nics), (std::vector<std::string>{"mlx5_0", "mlx5_1"}));
}

// The ports a node's GPUs use between nodes, counted as ports (bench-patterns' NIC line),
// not as one GPU's share: on NDv4 every GPU's switch has two HDR ports of 25 GB/s.
TEST(GpuNics, TheNodesPortsAreCountedAsPortsNotAsAGpusShare) {
  NodeTopology node = model_fixture("ndv4-a100-nvswitch.xml");
  ports_active(node, "InfiniBand");
  const NodeNetworkPorts all = inter_node_ports(node, gpu_layout(node, 2, all_gpu_positions(node)));
  EXPECT_EQ(all.ports, 8);
  ASSERT_TRUE(all.port_gbps);
  EXPECT_DOUBLE_EQ(*all.port_gbps, 25.0);
  // One GPU per node: its share is both NICs of its switch behind its own Gen4 x16 link
  // (single_nic_budget 31.5), but the ports are still two of 25.
  const int gpu0 = gpu_with_device_number(node, 0);
  const NodeNetworkPorts one = inter_node_ports(node, gpu_layout(node, 2, {gpu0}));
  EXPECT_EQ(one.ports, 2);
  ASSERT_TRUE(one.port_gbps);
  EXPECT_DOUBLE_EQ(*one.port_gbps, 25.0);
  EXPECT_NEAR(*single_nic_budget(node, gpu_layout(node, 2, {gpu0})).spec_gbps, 31.5, 0.1);
  node.nics.clear();
  const NodeNetworkPorts none = inter_node_ports(node, gpu_layout(node, 2, {gpu0}));
  EXPECT_EQ(none.ports, 0);
  EXPECT_FALSE(none.port_gbps);
}

TEST(GpuNics, AShortNicIsNamedWithTheGpusNearIt) {
  // NDv4: each switch holds two GPUs and two NICs, and both NICs are nearest both GPUs.
  const NodeTopology node = model_fixture("ndv4-a100-nvswitch.xml");
  const std::map<std::string, std::vector<int>> gpus = gpus_nearest_each_nic(node);
  const NicRoles roles = nic_roles(node);
  std::size_t compute = 0;
  for (std::size_t n = 0; n < node.nics.size(); ++n) {
    if (roles.role[n] != NicRole::compute) continue;
    ++compute;
    const auto found = gpus.find(node.nics[n].name);
    ASSERT_NE(found, gpus.end()) << node.nics[n].name;
    ASSERT_EQ(found->second.size(), 2u) << node.nics[n].name;
    // The two are the GPUs whose nearest NICs include this one, and no others.
    for (std::size_t g = 0; g < node.gpus.size(); ++g) {
      const std::vector<int> nearest = nearest_compute_nics(node, roles, static_cast<int>(g));
      const bool near = std::find(nearest.begin(), nearest.end(), static_cast<int>(n)) != nearest.end();
      const bool named =
          std::find(found->second.begin(), found->second.end(), node.gpus[g].index) != found->second.end();
      EXPECT_EQ(near, named) << node.nics[n].name << " GPU " << node.gpus[g].index;
    }
  }
  EXPECT_EQ(compute, 8u);
  EXPECT_EQ(gpus.at("mlx5_0"), (std::vector<int>{0, 1}));
}

}  // namespace
}  // namespace commbench
