// Finding the bad node and the degraded device.
#include <gtest/gtest.h>

#include "commbench/core/error.hpp"
#include "commbench/topology/hwloc_probe.hpp"
#include "commbench/topology/node_comparison.hpp"
#include "commbench/topology/node_probe.hpp"
#include "commbench/topology/sysfs_pcie.hpp"
#include "temp_dir.hpp"

#include <filesystem>

namespace commbench {
namespace {

const std::string kFixtures = std::string(COMMBENCH_TOPOLOGY_FIXTURES) + "/";

#define REQUIRE_HWLOC() \
  if (!hwloc_available()) GTEST_SKIP() << "built without hwloc (COMMBENCH_WITH_HWLOC=OFF)"

NodeTopology offline(const std::string& hwloc, const std::string& sysfs, const std::string& host) {
  ProbeOptions options;
  options.hwloc_xml = kFixtures + "hwloc/" + hwloc;
  options.sysfs_root = kFixtures + "sysfs/" + sysfs;
  NodeTopology node = probe_node(options);
  node.hostname = host;
  return node;
}

TEST(NodeFindings, HealthyNodeHasNone) {
  REQUIRE_HWLOC();
  EXPECT_EQ(node_findings(offline("dgx-h100.xml", "dgx-h100", "a")), std::vector<std::string>{});
}

TEST(NodeFindings, DegradedNodeNamesEachDevice) {
  REQUIRE_HWLOC();
  const std::vector<std::string> expected = {
      "GPU 3 (0000:5d:00.0): PCIe link 31.51 GB/s, other NVIDIA H100 80GB HBM3 GPUs have 63.02 GB/s",
      "GPU 5 (0000:ab:00.0): 16 NVLinks, other NVIDIA H100 80GB HBM3 GPUs have 18", "mlx5_3 port 1: DOWN (Polling)",
      "mlx5_5 port 1: 200 Gb/s (2X NDR), other InfiniBand ports run at 400 Gb/s"};
  EXPECT_EQ(node_findings(offline("dgx-h100-degraded.xml", "degraded", "b")), expected);
}

TEST(NodeFindings, NvmlWidthBelowMaximum) {
  NodeTopology node;
  Gpu gpu;
  gpu.bus_id = "0000:18:00.0";
  gpu.pcie_generation_current = 2;  // idle GPUs drop the generation: not a finding
  gpu.pcie_generation_max = 5;
  gpu.pcie_width_current = 8;
  gpu.pcie_width_max = 16;
  node.gpus = {gpu};
  EXPECT_EQ(node_findings(node), std::vector<std::string>{"GPU 0 (0000:18:00.0): PCIe link x8 of x16"});
  node.gpus[0].pcie_width_current = 16;
  EXPECT_TRUE(node_findings(node).empty());
}

TEST(NodeComparison, TheOddNodeOutIsNamed) {
  REQUIRE_HWLOC();
  const std::vector<NodeTopology> nodes = {offline("dgx-h100.xml", "dgx-h100", "node-a"),
                                           offline("dgx-h100-degraded.xml", "degraded", "node-b"),
                                           offline("dgx-h100.xml", "dgx-h100", "node-c")};
  std::vector<std::string> described;
  for (const NodeDifference& d : compare_nodes(nodes)) described.push_back(describe(d));
  const std::vector<std::string> expected = {
      "node-b: GPU 3 PCIe link is 31.51 GB/s, 2 of 3 nodes have 63.02 GB/s",
      "node-b: GPU 5 NVLinks is 16, 2 of 3 nodes have 18",
      "node-b: mlx5_3 port 1 is DOWN, 2 of 3 nodes have ACTIVE 400 Gb/s",
      "node-b: mlx5_5 port 1 is ACTIVE 200 Gb/s, 2 of 3 nodes have ACTIVE 400 Gb/s"};
  EXPECT_EQ(described, expected);
}

// Two GPUs whose hwloc link speed reads Gen1 x16 (4 GB/s): what an idle GPU shows.
NodeTopology two_idle_gpus() {
  NodeTopology node;
  for (int i = 0; i < 2; ++i) {
    PciObject pci;
    pci.bus_id = i == 0 ? "0000:18:00.0" : "0000:2a:00.0";
    pci.link_gbps = 4.0;
    node.pci.push_back(pci);
    Gpu gpu;
    gpu.index = i;
    gpu.pci = i;
    gpu.bus_id = pci.bus_id;
    gpu.model = "NVIDIA H100";
    node.gpus.push_back(gpu);
  }
  return node;
}

void write_link(const testing::TempDir& dir, const std::string& bus, const std::string& speed, int width) {
  const std::string base = "bus/pci/devices/" + bus + "/";
  std::filesystem::create_directories(dir.root() / base);
  dir.write(base + "max_link_speed", speed + "\n");
  dir.write(base + "current_link_width", std::to_string(width) + "\n");
  dir.write(base + "max_link_width", "16\n");
}

TEST(PcieLinks, IdleGpusAreNotDegradedButANarrowLinkIs) {
  const testing::TempDir dir;
  write_link(dir, "0000:18:00.0", "32.0 GT/s PCIe", 16);
  write_link(dir, "0000:2a:00.0", "32.0 GT/s PCIe", 8);
  NodeTopology node = two_idle_gpus();
  read_sysfs_pcie_links(node, dir.root().string());
  use_idle_proof_gpu_links(node);
  EXPECT_EQ(node.gpus[0].pcie_generation_max, 5);
  EXPECT_DOUBLE_EQ(node.pci[0].link_gbps, 63.0);  // Gen5 x16, not the idle 4 GB/s
  EXPECT_DOUBLE_EQ(node.pci[1].link_gbps, 31.5);
  EXPECT_EQ(
      node_findings(node),
      (std::vector<std::string>{"GPU 1 (0000:2a:00.0): PCIe link x8 of x16",
                                "GPU 1 (0000:2a:00.0): PCIe link 31.5 GB/s, other NVIDIA H100 GPUs have 63 GB/s"}));
  NodeTopology idle = two_idle_gpus();
  write_link(dir, "0000:2a:00.0", "32.0 GT/s PCIe", 16);
  read_sysfs_pcie_links(idle, dir.root().string());
  use_idle_proof_gpu_links(idle);
  EXPECT_TRUE(node_findings(idle).empty());
}

TEST(PcieLinks, GarbageNamesTheFile) {
  const testing::TempDir dir;
  write_link(dir, "0000:18:00.0", "fast", 16);
  NodeTopology node = two_idle_gpus();
  try {
    read_sysfs_pcie_links(node, dir.root().string());
    FAIL() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), dir.path("bus/pci/devices/0000:18:00.0/max_link_speed") +
                                         ": 'fast' is not a PCIe link speed (expected e.g. '32.0 GT/s PCIe')");
  }
}

TEST(NodeComparison, IdleGenerationIsNotADifferenceButWidthIs) {
  NodeTopology a, b, c;
  a.hostname = "a";
  b.hostname = "b";
  c.hostname = "c";
  Gpu gpu;
  gpu.model = "NVIDIA H100";
  gpu.pcie_generation_max = 5;
  gpu.pcie_width_max = 16;
  gpu.pcie_width_current = 16;
  gpu.pcie_generation_current = 5;
  a.gpus = {gpu};
  gpu.pcie_generation_current = 1;  // idle: power saving
  b.gpus = {gpu};
  gpu.pcie_width_current = 8;
  c.gpus = {gpu};
  std::vector<std::string> described;
  for (const NodeDifference& d : compare_nodes({a, b, c})) described.push_back(describe(d));
  EXPECT_EQ(described, std::vector<std::string>{"c: GPU 0 PCIe link is Gen5 x8, 2 of 3 nodes have Gen5 x16"});
}

TEST(NodeComparison, MissingGpusAndTies) {
  NodeTopology a, b;
  a.hostname = "a";
  b.hostname = "b";
  Gpu gpu;
  gpu.model = "NVIDIA H100";
  a.gpus = {gpu};
  const std::vector<NodeDifference> differences = compare_nodes({a, b});
  ASSERT_EQ(differences.size(), 6u);  // GPU count, model and NVLinks of GPU 0, each on both nodes
  EXPECT_EQ(describe(differences[0]), "a: GPU count is 1 (nodes disagree, no majority)");
  EXPECT_EQ(describe(differences[1]), "b: GPU count is 0 (nodes disagree, no majority)");
  EXPECT_EQ(describe(differences[3]), "b: GPU 0 model is absent (nodes disagree, no majority)");
  EXPECT_TRUE(compare_nodes({a}).empty());
  EXPECT_TRUE(compare_nodes({a, a}).empty());
}

}  // namespace
}  // namespace commbench
