// The nvidia-smi-style matrix, NIC table and link rows against the hand-derived matrices
// of tests/fixtures/topology/hwloc/README.md.
#include <gtest/gtest.h>

#include "commbench/core/error.hpp"
#include "commbench/topology/hwloc_probe.hpp"
#include "commbench/topology/node_probe.hpp"
#include "commbench/topology/pci_path.hpp"
#include "commbench/topology/topology_json.hpp"
#include "commbench/topology/topology_matrix.hpp"
#include "usage_error.hpp"

namespace commbench {
namespace {

const std::string kFixtures = std::string(COMMBENCH_TOPOLOGY_FIXTURES) + "/";

NodeTopology offline(const std::string& hwloc, const std::string& sysfs) {
  ProbeOptions options;
  options.hwloc_xml = kFixtures + "hwloc/" + hwloc;
  options.sysfs_root = sysfs.empty() ? "" : kFixtures + "sysfs/" + sysfs;
  return probe_node(options);
}

#define REQUIRE_HWLOC() \
  if (!hwloc_available()) GTEST_SKIP() << "built without hwloc (COMMBENCH_WITH_HWLOC=OFF)"

TEST(TopologyMatrix, PcieServerExactMatrix) {
  REQUIRE_HWLOC();
  const NodeTopology node = offline("pcie-4gpu.xml", "pcie-4gpu");
  const std::vector<std::vector<std::string>> expected = {
      {"X", "PIX", "SYS", "SYS", "NODE", "SYS"},  {"PIX", "X", "SYS", "SYS", "NODE", "SYS"},
      {"SYS", "SYS", "X", "PXB", "SYS", "PHB"},   {"SYS", "SYS", "PXB", "X", "SYS", "PHB"},
      {"NODE", "NODE", "SYS", "SYS", "X", "SYS"}, {"SYS", "SYS", "PHB", "PHB", "SYS", "X"}};
  EXPECT_EQ(matrix_entries(node), expected);  // eno1 (no RDMA) is in the NIC table, not the matrix
  const std::string text = render_matrix(node);
  EXPECT_NE(text.find("GPU2   SYS    SYS    X      PXB    SYS    PHB    4-7             1\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("  NIC1: mlx5_1\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("eno1"), std::string::npos) << text;
  const std::string table = render_nic_table(node);
  EXPECT_NE(
      table.find("mlx5_0    1    ACTIVE  LinkUp      200 Gb/s (4X HDR)     InfiniBand 0000:07:00.0  0    ibp7s0\n"),
      std::string::npos)
      << table;
  EXPECT_NE(table.find("eno1      1    ACTIVE  "), std::string::npos) << table;
}

TEST(TopologyMatrix, DgxH100ByTheRuleOfItsLayout) {
  REQUIRE_HWLOC();
  const NodeTopology node = offline("dgx-h100.xml", "dgx-h100");
  const auto matrix = matrix_entries(node);
  ASSERT_EQ(matrix.size(), 16u);
  // GPU i and NIC i share a switch; pairs 0-3 sit on socket 0, 4-7 on socket 1.
  for (int i = 0; i < 16; ++i) {
    for (int j = 0; j < 16; ++j) {
      const bool gpu_i = i < 8, gpu_j = j < 8;
      const int pair_i = i % 8, pair_j = j % 8;
      std::string want;
      if (i == j)
        want = "X";
      else if (gpu_i && gpu_j)
        want = "NV18";
      else if (pair_i == pair_j)
        want = "PIX";
      else if ((pair_i < 4) == (pair_j < 4))
        want = "NODE";
      else
        want = "SYS";
      EXPECT_EQ(matrix[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)], want) << i << "," << j;
    }
  }
}

TEST(TopologyMatrix, DegradedGpuFiveHasSixteenLinks) {
  REQUIRE_HWLOC();
  const auto matrix = matrix_entries(offline("dgx-h100-degraded.xml", "degraded"));
  for (std::size_t j = 0; j < 8; ++j) {
    if (j != 5) EXPECT_EQ(matrix[5][j], "NV16");
    if (j != 5) EXPECT_EQ(matrix[j][5], "NV16");
  }
  EXPECT_EQ(matrix[3][4], "NV18");
}

TEST(TopologyMatrix, LinkRowsCarrySpecBandwidth) {
  REQUIRE_HWLOC();
  const NodeTopology node = offline("dgx-h100-degraded.xml", "degraded");
  const std::vector<LinkRow> rows = link_rows(node);
  int nvlink_rows = 0;
  bool saw_gpu3 = false, saw_down = false;
  for (const LinkRow& row : rows) {
    if (row.type == "NVLink") ++nvlink_rows;
    if (row.from == "GPU3" && row.type == "PCIe") {
      saw_gpu3 = true;
      EXPECT_EQ(row.to, "0000:5c:00.0");
      EXPECT_NEAR(row.spec_gbps, 31.508, 0.001);
    }
    if (row.from == "mlx5_3 port 1") {
      saw_down = true;
      EXPECT_EQ(row.state, "DOWN");
      EXPECT_EQ(csv_record_line(link_record(row), record_kind("link")),
                node.hostname + ",mlx5_3 port 1,network,InfiniBand,4,1.25,DOWN");
    }
  }
  EXPECT_EQ(nvlink_rows, 32);  // 8 GPUs x 4 NVSwitches
  EXPECT_TRUE(saw_gpu3);
  EXPECT_TRUE(saw_down);
  EXPECT_EQ(csv_header(record_kind("link")), "host,from,to,type,count,spec_gbps,state");
  // Unknown figures are empty cells, not zeros.
  LinkRow hwloc_link{"node", "GPU0", "host bridge", "PCIe", 0, 0, ""};
  EXPECT_EQ(csv_record_line(link_record(hwloc_link), record_kind("link")), "node,GPU0,host bridge,PCIe,,,");
}

TEST(TopologyMatrix, CpuListsAndUnknownPaths) {
  EXPECT_EQ(format_cpu_list({0, 1, 2, 3, 8, 9, 10, 11}), "0-3,8-11");
  EXPECT_EQ(format_cpu_list({5}), "5");
  EXPECT_EQ(format_cpu_list({3, 1, 2}), "1-3");
  EXPECT_EQ(format_cpu_list({}), "N/A");
  NodeTopology node;
  node.gpus.resize(2);
  node.gpus[1].index = 1;
  node.gpus[0].numa = 0;
  node.gpus[1].numa = 1;
  EXPECT_EQ(to_string(classify(node, {Endpoint::Kind::gpu, 0}, {Endpoint::Kind::gpu, 1})), "SYS");
  node.gpus[1].numa = 0;
  EXPECT_EQ(to_string(classify(node, {Endpoint::Kind::gpu, 0}, {Endpoint::Kind::gpu, 1})), "?");
}

TEST(TopologyJson, RoundTripKeepsTheMatrix) {
  REQUIRE_HWLOC();
  const NodeTopology node = offline("dgx-h100-degraded.xml", "degraded");
  const NodeTopology back = topology_from_json_text(topology_to_json_text(node), "test");
  EXPECT_EQ(matrix_entries(back), matrix_entries(node));
  EXPECT_EQ(back.nics[3].ports[0].state, "DOWN");
  EXPECT_EQ(back.gpus[5].model, node.gpus[5].model);
  EXPECT_EQ(topology_to_json_text(back), topology_to_json_text(node));
  EXPECT_THROW(topology_from_json_text("{\"hostname\": 3}", "rank 2"), UsageError);
}

TEST(TopologyJson, P2pStatusSurvivesTheRoundTrip) {
  NodeTopology node;
  node.hostname = "n";
  node.p2p.push_back({0, 1, Capability::yes, Capability::no, Capability::unknown, Capability::yes});
  const NodeTopology back = topology_from_json_text(topology_to_json_text(node), "test");
  ASSERT_EQ(back.p2p.size(), 1u);
  EXPECT_EQ(back.p2p[0].gpu_b, 1);
  EXPECT_EQ(back.p2p[0].read, Capability::yes);
  EXPECT_EQ(back.p2p[0].write, Capability::no);
  EXPECT_EQ(back.p2p[0].atomics, Capability::unknown);
  EXPECT_EQ(back.p2p[0].nvlink, Capability::yes);
}

// The model of another rank's node keeps its CPU type: the achievable figure of a ring
// across sockets depends on it (bench-topology gathers every node's model as JSON).
TEST(TopologyJson, CpuTypeSurvivesTheRoundTrip) {
  NodeTopology node;
  node.hostname = "n";
  node.cpu_type = {"x86_64", "GenuineIntel", 6, 143};
  const NodeTopology back = topology_from_json_text(topology_to_json_text(node), "test");
  EXPECT_EQ(back.cpu_type.architecture, "x86_64");
  EXPECT_EQ(back.cpu_type.vendor, "GenuineIntel");
  EXPECT_EQ(back.cpu_type.family, 6);
  EXPECT_EQ(back.cpu_type.model, 143);
}

// A model that arrives from another rank is checked before anything walks it: the path
// code follows PCI indexes without bounds checks.
TEST(TopologyJson, ModelsWithBadIndexesOrFieldsAreRefused) {
  NodeTopology node;
  node.hostname = "n";
  node.pci.push_back(PciObject{});
  node.pci.push_back(PciObject{});
  node.pci[1].parent = 0;
  node.gpus.push_back(Gpu{});
  node.gpus[0].pci = 1;
  const std::string good = topology_to_json_text(node);
  EXPECT_EQ(topology_from_json_text(good, "rank 1").pci[1].parent, 0);

  const auto error_of = [](const std::string& text) {
    return testing::usage_error_of([&] { topology_from_json_text(text, "rank 1"); });
  };
  node.pci[1].parent = 1;  // itself: a cycle for any walk up the tree
  EXPECT_EQ(error_of(topology_to_json_text(node)), "rank 1: PCI object 1 has a parent that does not precede it");
  node.pci[1].parent = 0;
  node.gpus[0].pci = 2;
  EXPECT_EQ(error_of(topology_to_json_text(node)), "rank 1: PCI index out of range");
  std::string missing = good;
  missing.erase(missing.find("\"sm\":"), 7);  // "sm":0, gone
  EXPECT_EQ(error_of(missing).rfind("rank 1: not a commbench topology model (", 0), 0u) << error_of(missing);
  // A list that is not a list: nlohmann would iterate null or a scalar as if it were one.
  std::string not_a_list = good;
  not_a_list.replace(not_a_list.find("\"cpu_list\":[]"), 13, "\"cpu_list\":null");
  EXPECT_EQ(error_of(not_a_list).rfind("rank 1: not a commbench topology model (", 0), 0u) << error_of(not_a_list);
}

// A model received from another rank is judged as its file holds it: bytes of a name that
// are not UTF-8 replaced, its PCI indexes checked.
TEST(TopologyJson, AModelAsWrittenHasUtf8NamesAndCheckedIndexes) {
  NodeTopology node;
  node.hostname = "node\xff";
  EXPECT_EQ(topology_as_written(node, "rank 1").hostname, "node\xef\xbf\xbd");
  node.gpus.push_back(Gpu{});
  node.gpus[0].pci = 2;
  EXPECT_EQ(testing::usage_error_of([&] { topology_as_written(node, "rank 1"); }), "rank 1: PCI index out of range");
}

TEST(NodeProbe, DevicesKnownOnlyByBusIdAreAttachedToTheTree) {
  NodeTopology node;
  node.numa_nodes = {{0, {0, 1}}, {1, {2, 3}}};
  PciObject host;
  host.kind = PciKind::host_bridge;
  host.numa = 1;
  PciObject nic_pci;
  nic_pci.parent = 0;
  nic_pci.bus_id = "0000:87:00.0";
  node.pci = {host, nic_pci};
  Nic nic;  // as sysfs or libibverbs report it: a name and a bus id, no place in the tree
  nic.name = "mlx5_1";
  nic.bus_id = "0000:87:00.0";
  node.nics = {nic};
  attach_to_pci_tree(node);
  EXPECT_EQ(node.nics[0].pci, 1);
  EXPECT_EQ(node.nics[0].numa, 1);  // the locality its host bridge hangs off
  EXPECT_EQ(node.nics[0].cpus, (std::vector<int>{2, 3}));
}

}  // namespace
}  // namespace commbench
