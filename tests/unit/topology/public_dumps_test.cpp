// The reader against dumps of real machines that nobody here wrote (reduced copies of public
// files, origins in tests/fixtures/topology/{hwloc,nccl}/README.md): what a source cannot
// say stays unknown, and each figure it can say matches what NCCL and nvidia-smi print.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "commbench/backend/local_bootstrap.hpp"
#include "commbench/backend/typed_exchange.hpp"
#include "commbench/core/collective.hpp"
#include "commbench/topology/bandwidth_model.hpp"
#include "commbench/topology/hwloc_probe.hpp"
#include "commbench/topology/nic_roles.hpp"
#include "commbench/topology/node_probe.hpp"
#include "commbench/topology/pci_path.hpp"
#include "commbench/topology/topology_fields.hpp"
#include "commbench/topology/topology_json.hpp"
#include "commbench/topology/topology_matrix.hpp"

namespace commbench {
namespace {

const std::string kFixtures = std::string(COMMBENCH_TOPOLOGY_FIXTURES) + "/";

#define REQUIRE_HWLOC() \
  if (!hwloc_available()) GTEST_SKIP() << "built without hwloc (COMMBENCH_WITH_HWLOC=OFF)"

NodeTopology nccl_dump(const std::string& file) {
  ProbeOptions options;
  options.nccl_topo_xml = kFixtures + "nccl/" + file;
  return probe_node(options);
}

NodeTopology hwloc_export(const std::string& file) {
  ProbeOptions options;
  options.hwloc_xml = kFixtures + "hwloc/" + file;
  return probe_node(options);
}

Connection between(const NodeTopology& node, Endpoint a, Endpoint b) { return classify(node, a, b); }

constexpr Endpoint gpu(int index) { return {Endpoint::Kind::gpu, index}; }
constexpr Endpoint nic(int index) { return {Endpoint::Kind::nic, index}; }

bool has_line_containing(const std::vector<std::string>& lines, const std::string& text) {
  for (const std::string& line : lines)
    if (line.find(text) != std::string::npos) return true;
  return false;
}

// aliyun/SimAI's HGX A100 dump: GPU1 sits behind switch 17:00.0, which hangs under
// switch 15:00.0 next to NIC mlx5_bond_1. NCCL keeps one <pci> per switch, so that is two
// switches: PXB, as NCCL and nvidia-smi say, not PIX.
TEST(PublicNcclDumps, HgxA100GpuBehindASecondSwitchIsPxbToItsNic) {
  const NodeTopology node = nccl_dump("hgx-a100-switches.xml");
  ASSERT_EQ(node.gpus.size(), 3u);
  ASSERT_EQ(node.nics.size(), 3u);
  EXPECT_EQ(node.nics[1].name, "mlx5_bond_1");
  EXPECT_EQ(to_string(between(node, gpu(1), nic(1))), "PXB");
  EXPECT_EQ(to_string(between(node, gpu(0), nic(1))), "PXB");
  EXPECT_EQ(to_string(between(node, gpu(2), nic(2))), "PXB");
  const std::vector<std::vector<std::string>> expected = {
      {"X", "NV12", "NV12", "?", "PXB", "SYS"},   {"NV12", "X", "NV12", "?", "PXB", "SYS"},
      {"NV12", "NV12", "X", "SYS", "SYS", "PXB"}, {"?", "?", "SYS", "X", "?", "SYS"},
      {"PXB", "PXB", "SYS", "?", "X", "SYS"},     {"SYS", "SYS", "PXB", "SYS", "SYS", "X"}};
  EXPECT_EQ(matrix_entries(node), expected);
}

// The same dump: every GPU has a NIC on its switches, so mlx5_bond_0, the same ConnectX-6
// Dx directly under CPU 0 with no GPU in its tree, is a front-end NIC, not compute (issue 38).
TEST(PublicNcclDumps, HgxA100NicAwayFromTheGpusIsNotCompute) {
  const NodeTopology node = nccl_dump("hgx-a100-switches.xml");
  ASSERT_EQ(node.nics[0].name, "mlx5_bond_0");
  EXPECT_EQ(nic_roles(node).role, (std::vector<NicRole>{NicRole::other, NicRole::compute, NicRole::compute}));
}

// Two devices directly under one <cpu> of an NCCL dump may share a host bridge (PHB) or
// not (NODE): NCCL does not write host bridges, so the matrix says ? and why.
TEST(PublicNcclDumps, NodeOrPhbIsNotGuessedWhereTheDumpCannotTell) {
  const NodeTopology node = nccl_dump("hgx-a100-switches.xml");
  EXPECT_EQ(between(node, gpu(0), nic(0)).kind, PathClass::unknown);
  EXPECT_EQ(between(node, nic(0), nic(1)).kind, PathClass::unknown);
  EXPECT_EQ(between(node, gpu(0), nic(2)).kind, PathClass::sys);  // another CPU: that much is known
  EXPECT_TRUE(has_line_containing(node.unknowns,
                                  "whether two devices under one CPU share a host bridge (PHB) or "
                                  "not (NODE) is unknown, shown ?"));
  // The hwloc fixture of the same layout, which has its host bridges, still tells them apart.
  REQUIRE_HWLOC();
  const NodeTopology with_bridges = hwloc_export("pcie-4gpu.xml");
  EXPECT_EQ(to_string(between(with_bridges, gpu(0), nic(0))), "NODE");
  EXPECT_EQ(to_string(between(with_bridges, gpu(2), nic(1))), "PHB");
}

// The dump of NVIDIA/nccl issue 2397: mlx5_0 (port 1) and mlx5_1 (port 2) in one PCI
// function 0000:16:00.0. Two ports of one NIC are not the device itself.
TEST(PublicNcclDumps, TwoPortsOfOneNicFunctionArePixToEachOther) {
  const NodeTopology node = nccl_dump("dual-port-roce.xml");
  ASSERT_EQ(node.nics.size(), 2u);
  EXPECT_EQ(node.nics[0].pci, node.nics[1].pci);
  EXPECT_EQ(to_string(between(node, nic(0), nic(1))), "PIX");
  EXPECT_EQ(to_string(between(node, nic(1), nic(0))), "PIX");
  const std::vector<std::vector<std::string>> expected = {
      {"X", "SYS", "?", "?"}, {"SYS", "X", "SYS", "SYS"}, {"?", "SYS", "X", "PIX"}, {"?", "SYS", "PIX", "X"}};
  EXPECT_EQ(matrix_entries(node), expected);
}

// A dump has no port state. Its ports may be shown ACTIVE only where the unknowns say that
// this is inferred from NCCL listing them, never beside a line saying there is no state.
TEST(PublicNcclDumps, PortsShownActiveSayTheStateIsInferred) {
  for (const char* file : {"hgx-a100-switches.xml", "dual-port-roce.xml"}) {
    SCOPED_TRACE(file);
    const NodeTopology node = nccl_dump(file);
    for (const Nic& card : node.nics) {
      ASSERT_EQ(card.ports.size(), 1u);
      EXPECT_EQ(card.ports[0].state, "ACTIVE");
      EXPECT_EQ(card.ports[0].physical_state, "");
    }
    for (const std::string& line : node.unknowns) {
      if (line.find("port state") == std::string::npos) continue;
      EXPECT_NE(line.find("a listed port is taken as ACTIVE, since NCCL lists only the ports it found usable"),
                std::string::npos)
          << line;
    }
    EXPECT_TRUE(has_line_containing(node.unknowns, "taken as ACTIVE"));
  }
  const NodeTopology node = nccl_dump("dual-port-roce.xml");
  EXPECT_EQ(node.nics[1].ports[0].port, 2);
}

TEST(PublicNcclDumps, ProvenanceNamesTheDumpFormat) {
  const NodeTopology node = nccl_dump("dual-port-roce.xml");
  ASSERT_FALSE(node.sources.empty());
  EXPECT_EQ(node.sources[0],
            "nccl-topo-xml " + kFixtures + "nccl/dual-port-roce.xml (NCCL topology dump, format version 1)");
}

// ParaStation/psmgmt's JURECA-DC GPU node: four A100-SXM4-40GB (10de:20b0), fully
// NVLinked, exported by hwloc 2.2 without NVML. hwloc carries no NVLink there, so the GPU
// pairs are unknown, not SYS, and no 31.5 GB/s PCIe figure is offered as their bandwidth.
TEST(PublicHwlocExports, SxmGpusWithoutAnNvlinkMatrixAreUnknownNotSys) {
  REQUIRE_HWLOC();
  const NodeTopology node = hwloc_export("jureca-dc-a100.xml");
  ASSERT_EQ(node.gpus.size(), 4u);
  for (const Gpu& each : node.gpus) EXPECT_TRUE(each.nvlinks_unrecorded) << each.bus_id;
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 4; ++b) {
      if (a != b) EXPECT_EQ(to_string(between(node, gpu(a), gpu(b))), "?") << a << "-" << b;
    }
  }
  EXPECT_EQ(to_string(between(node, gpu(0), nic(0))), "PIX");  // the PCI facts stay
  EXPECT_TRUE(has_line_containing(node.unknowns,
                                  "NVLinks of GPU 0,1,2,3 (A100-SXM4-40GB, NVLink parts) unknown: "
                                  "hwloc records NVLink only through its NVML backend"));
  JobLayout layout;
  layout.nodes = 1;
  layout.ranks_per_node = 4;
  for (const Gpu& each : node.gpus) layout.gpu_bus_ids.push_back(each.bus_id);
  for (const Collective op : {Collective::allreduce, Collective::alltoall, Collective::sendrecv}) {
    const TheoreticalBusbw busbw = theoretical_busbw(op, node, layout);
    EXPECT_FALSE(busbw.spec_gbps.has_value()) << busbw.basis;
    EXPECT_NE(busbw.basis.find("NVLinks of GPU 0 (an NVLink part) were not recorded"), std::string::npos)
        << busbw.basis;
  }
}

// A PCIe GPU without NVLink in the same kind of export keeps its PCIe paths: only NVLink
// parts are unknown.
TEST(PublicHwlocExports, PcieGpusKeepTheirPcieClasses) {
  REQUIRE_HWLOC();
  const NodeTopology node = hwloc_export("pcie-4gpu.xml");
  for (const Gpu& each : node.gpus) EXPECT_FALSE(each.nvlinks_unrecorded) << each.bus_id;
  EXPECT_EQ(to_string(between(node, gpu(0), gpu(1))), "PIX");
  EXPECT_FALSE(has_line_containing(node.unknowns, "NVLinks of GPU"));
}

// hwloc copies each InfiniBand port's state into the OpenFabrics device ("Port1State" 4 =
// ACTIVE) and IPoIB's 20-byte address shows the link layer; no rate is exported.
TEST(PublicHwlocExports, PortStatesAreReadFromTheExport) {
  REQUIRE_HWLOC();
  const NodeTopology node = hwloc_export("jureca-dc-a100.xml");
  ASSERT_EQ(node.nics.size(), 4u);
  for (const Nic& card : node.nics) {
    SCOPED_TRACE(card.name);
    ASSERT_EQ(card.ports.size(), 1u);
    const NicPort& port = card.ports[0];
    // Port 1, state 4 (ACTIVE), InfiniBand, rate unknown (0).
    EXPECT_EQ(std::tie(port.port, port.state_code, port.state, port.link_layer, port.rate_gbit),
              std::make_tuple(1, 4, std::string("ACTIVE"), std::string("InfiniBand"), 0.0));
  }
  const std::string table = render_nic_table(node);
  EXPECT_NE(table.find("mlx5_0    1    ACTIVE  ?           ?                     InfiniBand 0000:04:00.0  3    ib0\n"),
            std::string::npos)
      << table;
  EXPECT_TRUE(has_line_containing(node.unknowns,
                                  "NIC port rates and physical states unknown: the hwloc export "
                                  "records port states only"));
  EXPECT_FALSE(has_line_containing(node.unknowns, "NIC port state and rate unknown"));
}

// Active ports whose rate the export does not record: the inter-node figure is unknown
// and says why, not "no active NIC port" (they are active).
TEST(PublicHwlocExports, InterNodeBasisNamesActivePortsOfUnknownRate) {
  REQUIRE_HWLOC();
  const NodeTopology node = hwloc_export("jureca-dc-a100.xml");
  JobLayout layout;
  layout.nodes = 2;
  layout.ranks_per_node = 4;
  for (const Gpu& gpu : node.gpus) layout.gpu_bus_ids.push_back(gpu.bus_id);
  const PathBudget between = inter_node_budget(node, layout);
  EXPECT_FALSE(between.spec_gbps);
  EXPECT_EQ(between.description.rfind("active NIC ports of unrecorded rate (mlx5_", 0), 0u) << between.description;
  EXPECT_NE(between.description.find("): the source gives port states but no rates"), std::string::npos)
      << between.description;
}

// The provenance names what wrote the export (its root's hwlocVersion and ProcessName
// infos) besides the hwloc that read it; an export without them says so.
TEST(PublicHwlocExports, ProvenanceNamesTheHwlocThatWroteTheFile) {
  REQUIRE_HWLOC();
  const std::string path = kFixtures + "hwloc/jureca-dc-a100.xml";
  const NodeTopology node = probe_hwloc(path);
  ASSERT_FALSE(node.sources.empty());
  const std::string expected = "hwloc XML " + path + " (written by lstopo-no-graphics of hwloc 2.2.0, read with hwloc ";
  EXPECT_EQ(node.sources[0].rfind(expected, 0), 0u) << node.sources[0];
  const NodeTopology handwritten = probe_hwloc(kFixtures + "hwloc/pcie-4gpu.xml");
  EXPECT_NE(handwritten.sources[0].find("(written by an hwloc that did not record its version, read with hwloc "),
            std::string::npos)
      << handwritten.sources[0];
}

// bench-topology hands each node to rank 0 through the typed exchange: the model arrives
// as its sender would write it.
TEST(PublicDumps, ModelsCrossTheRankExchangeWhole) {
  std::vector<NodeTopology> nodes{nccl_dump("hgx-a100-switches.xml"), nccl_dump("dual-port-roce.xml")};
  if (hwloc_available()) nodes.push_back(hwloc_export("jureca-dc-a100.xml"));
  LocalBootstrap group;
  for (const NodeTopology& node : nodes) {
    const std::vector<std::optional<NodeTopology>> gathered = all_gather_as(group, std::optional(node));
    ASSERT_EQ(gathered.size(), 1u);
    ASSERT_TRUE(gathered[0].has_value());
    EXPECT_EQ(topology_to_json_text(*gathered[0]), topology_to_json_text(node));
    EXPECT_EQ(matrix_entries(*gathered[0]), matrix_entries(node));
  }
}

// bench-topology's file holds each node as JSON: what is unknown must stay unknown.
TEST(PublicDumps, UnknownsSurviveTheJsonRoundTrip) {
  std::vector<NodeTopology> nodes{nccl_dump("hgx-a100-switches.xml"), nccl_dump("dual-port-roce.xml")};
  if (hwloc_available()) nodes.push_back(hwloc_export("jureca-dc-a100.xml"));
  for (const NodeTopology& node : nodes) {
    const NodeTopology copy = topology_from_json_text(topology_to_json_text(node), "rank 1");
    EXPECT_EQ(copy.pci_detail, node.pci_detail);
    EXPECT_EQ(matrix_entries(copy), matrix_entries(node));
  }
}

}  // namespace
}  // namespace commbench
