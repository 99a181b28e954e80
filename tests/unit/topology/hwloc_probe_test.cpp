// The hwloc loader against hand-written fixtures (tests/fixtures/topology/hwloc, layouts
// in its README) and the real topologies of ../shared/fixtures/hwloc (skipped when absent).
#include <gtest/gtest.h>

#include <algorithm>

#include <unistd.h>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "commbench/core/error.hpp"
#include "commbench/topology/hwloc_probe.hpp"
#include "commbench/topology/link_spec.hpp"
#include "commbench/topology/pci_path.hpp"
#include "commbench/topology/topology_matrix.hpp"
#include "temp_dir.hpp"
#include "usage_error.hpp"

namespace commbench {
namespace {

namespace fs = std::filesystem;

const std::string kFixtures = std::string(COMMBENCH_TOPOLOGY_FIXTURES) + "/hwloc/";
const std::string kShared = std::string(COMMBENCH_SHARED_HWLOC_FIXTURES) + "/";

#define REQUIRE_HWLOC() \
  if (!hwloc_available()) GTEST_SKIP() << "built without hwloc (COMMBENCH_WITH_HWLOC=OFF)"
#define REQUIRE_SHARED(file) \
  REQUIRE_HWLOC();           \
  if (!fs::exists(kShared + (file))) GTEST_SKIP() << "../shared/fixtures/hwloc/" << (file) << " is absent"

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string usage_error_of(const std::string& path) {
  return testing::usage_error_of([&] { probe_hwloc(path); });
}

const std::vector<std::string> kDgxGpuBusIds = {"0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0",
                                                "0000:9a:00.0", "0000:ab:00.0", "0000:ba:00.0", "0000:db:00.0"};
const std::vector<std::string> kDgxNicBusIds = {"0000:19:00.0", "0000:2b:00.0", "0000:3b:00.0", "0000:5e:00.0",
                                                "0000:9b:00.0", "0000:ac:00.0", "0000:bb:00.0", "0000:dc:00.0"};

TEST(HwlocProbe, DgxH100Devices) {
  REQUIRE_HWLOC();
  const NodeTopology node = probe_hwloc(kFixtures + "dgx-h100.xml");
  ASSERT_EQ(node.gpus.size(), 8u);
  ASSERT_EQ(node.nics.size(), 8u);
  ASSERT_EQ(node.numa_nodes.size(), 2u);
  EXPECT_EQ(node.numa_nodes[1].cpus, (std::vector<int>{4, 5, 6, 7}));
  for (std::size_t i = 0; i < 8; ++i) {
    const Gpu& gpu = node.gpus[i];
    EXPECT_EQ(gpu.index, static_cast<int>(i));
    EXPECT_EQ(gpu.bus_id, kDgxGpuBusIds[i]);
    EXPECT_EQ(gpu.model, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(gpu.nvlink_generation, 4);
    EXPECT_EQ(gpu.numa, i < 4 ? 0 : 1);
    EXPECT_EQ(gpu.cpus, i < 4 ? (std::vector<int>{0, 1, 2, 3}) : (std::vector<int>{4, 5, 6, 7}));
    EXPECT_NEAR(node.pci[static_cast<std::size_t>(gpu.pci)].link_gbps, 63.015, 0.001);
    EXPECT_EQ(nvlinks_to_switches(node, static_cast<int>(i)), 18);
    const Nic& nic = node.nics[i];
    EXPECT_EQ(nic.name, "mlx5_" + std::to_string(i));
    EXPECT_EQ(nic.bus_id, kDgxNicBusIds[i]);
    EXPECT_EQ(nic.numa, i < 4 ? 0 : 1);
    EXPECT_TRUE(nic.rdma);
  }
  EXPECT_EQ(node.nics[0].netdevs, std::vector<std::string>{"ibp25s0"});
  // 5, 4, 4, 5 links to the four NVSwitches, each 25 GB/s.
  std::vector<int> links;
  for (const NvlinkGroup& g : node.nvlinks) {
    if (g.gpu != 0) continue;
    EXPECT_EQ(g.peer, NvlinkPeer::nvswitch);
    EXPECT_DOUBLE_EQ(g.gbps_per_link, 25.0);
    links.push_back(g.links);
  }
  EXPECT_EQ(links, (std::vector<int>{5, 4, 4, 5}));
  EXPECT_EQ(node.sources.front().rfind("hwloc ", 0), 0u);
}

TEST(HwlocProbe, DegradedNodeShowsTheNarrowLinkAndTheMissingNvlinks) {
  REQUIRE_HWLOC();
  const NodeTopology node = probe_hwloc(kFixtures + "dgx-h100-degraded.xml");
  EXPECT_NEAR(node.pci[static_cast<std::size_t>(node.gpus[3].pci)].link_gbps, 31.508, 0.001);
  EXPECT_EQ(nvlinks_to_switches(node, 5), 16);
  EXPECT_EQ(nvlinks_to_switches(node, 4), 18);
}

TEST(HwlocProbe, PcieServerPathsAndLocality) {
  REQUIRE_HWLOC();
  const NodeTopology node = probe_hwloc(kFixtures + "pcie-4gpu.xml");
  ASSERT_EQ(node.gpus.size(), 4u);
  ASSERT_EQ(node.nics.size(), 2u);
  EXPECT_EQ(node.gpus[0].model, "NVIDIA L40S");
  EXPECT_EQ(node.gpus[0].nvlink_generation, 0);
  EXPECT_TRUE(node.nvlinks.empty());
  EXPECT_EQ(node.gpus[2].bus_id, "0000:85:00.0");
  EXPECT_EQ(node.nics[1].bus_id, "0000:87:00.0");
  // GPU0 -> its downstream port -> switch upstream port -> root port -> host bridge.
  EXPECT_NEAR(pci_path_bottleneck_gbps(node, node.gpus[0].pci, node.gpus[1].pci), 31.508, 0.001);
  // The hand-written export names the vendor, not CPUID's family and model.
  EXPECT_EQ(node.cpu_type.architecture, "x86_64");
  EXPECT_EQ(node.cpu_type.vendor, "GenuineIntel");
  EXPECT_EQ(node.cpu_type.family, -1);
  EXPECT_EQ(node.cpu_type.model, -1);
}

TEST(HwlocProbe, CpuidNumbersAreReadAndGarbageStaysUnknown) {
  REQUIRE_HWLOC();
  const testing::TempDir dir;
  const std::string original = read_text(kFixtures + "pcie-4gpu.xml");
  const std::string vendor = "<info name=\"CPUVendor\" value=\"GenuineIntel\"/>";
  ASSERT_NE(original.find(vendor), std::string::npos);
  const auto with_numbers = [&](const std::string& family, const std::string& model) {
    std::string text = original;
    text.insert(text.find(vendor) + vendor.size(), "<info name=\"CPUFamilyNumber\" value=\"" + family +
                                                       "\"/><info name=\"CPUModelNumber\" value=\"" + model + "\"/>");
    return probe_hwloc(dir.write(family + "-" + model + ".xml", text)).cpu_type;
  };
  const CpuType sapphire_rapids = with_numbers("6", "143");
  EXPECT_EQ(sapphire_rapids.family, 6);
  EXPECT_EQ(sapphire_rapids.model, 143);
  // hwloc does not parse these infos: a value that is no number is an unknown, not a 0.
  const CpuType garbage = with_numbers("6x", "");
  EXPECT_EQ(garbage.family, -1);
  EXPECT_EQ(garbage.model, -1);
}

TEST(HwlocProbe, BadFilesNameTheFileAndTheProblem) {
  REQUIRE_HWLOC();
  const testing::TempDir dir;
  const std::string original = read_text(kFixtures + "pcie-4gpu.xml");
  ASSERT_FALSE(original.empty());

  const std::string truncated = dir.write("truncated.xml", original.substr(0, original.size() / 2));
  EXPECT_EQ(usage_error_of(truncated).rfind(truncated + ":", 0), 0u) << usage_error_of(truncated);
  EXPECT_NE(usage_error_of(truncated).find("end of file"), std::string::npos) << usage_error_of(truncated);

  std::string unknown_class = original;
  const std::size_t gpu = unknown_class.find("pci_type=\"0302");
  ASSERT_NE(gpu, std::string::npos);
  unknown_class.replace(gpu, 14, "pci_type=\"9902");
  const std::string bad_class = dir.write("bad_class.xml", unknown_class);
  const std::string class_error = usage_error_of(bad_class);
  EXPECT_EQ(class_error.substr(0, bad_class.size() + 1), bad_class + ":") << class_error;
  EXPECT_NE(class_error.find(": PCI device 0000:03:00.0 has unknown PCI class 0x9902"), std::string::npos)
      << class_error;

  std::string garbage_class = original;
  garbage_class.replace(gpu, 14, "pci_type=\"zz02");
  const std::string bad_type = dir.write("bad_type.xml", garbage_class);
  EXPECT_NE(usage_error_of(bad_type).find("has a malformed pci_type 'zz02 [10de:26b9]"), std::string::npos)
      << usage_error_of(bad_type);

  // The same GPU twice: GPU1's bus id given to GPU0 as well.
  std::string twice = original;
  const std::size_t first = twice.find("pci_busid=\"0000:03:00.0\"");
  ASSERT_NE(first, std::string::npos);
  twice.replace(first, 24, "pci_busid=\"0000:04:00.0\"");
  const std::string duplicated = dir.write("duplicated.xml", twice);
  EXPECT_EQ(usage_error_of(duplicated), duplicated + ": GPU 0000:04:00.0 listed twice");

  const std::string not_hwloc = dir.write("not_hwloc.xml", "<?xml version=\"1.0\"?>\n<system version=\"1\"/>\n");
  EXPECT_EQ(usage_error_of(not_hwloc),
            not_hwloc + ":2: not an hwloc topology (root element <system>, expected <topology>)");

  EXPECT_EQ(usage_error_of("/nonexistent/topo.xml").rfind("/nonexistent/topo.xml: cannot read", 0), 0u)
      << usage_error_of("/nonexistent/topo.xml");
}

// hwloc drops an object (or the whole file) whose values it cannot parse, silently; the
// probe must refuse such a file instead, naming the line, so no GPU goes missing unseen.
TEST(HwlocProbe, GarbledValuesAreRefusedWithTheirLine) {
  REQUIRE_HWLOC();
  const testing::TempDir dir;
  const std::string original = read_text(kFixtures + "pcie-4gpu.xml");
  struct Case {
    std::string from, to, message;
  };
  const std::vector<Case> cases = {
      {"pci_busid=\"0000:03:00.0\"", "pci_busid=\"zz\"", "pci_busid 'zz' is not a PCI bus id (DDDD:BB:DD.F)"},
      {"pci_busid=\"0000:03:00.0\"", "pci_busid=\"0000:03:00\"", "pci_busid '0000:03:00' is not a PCI bus id"},
      {"pci_busid=\"0000:03:00.0\"", "pci_busid=\"0000:3:00.0\"", "pci_busid '0000:3:00.0' is not a PCI bus id"},
      {"cpuset=\"0x0000000f\"", "cpuset=\"fifteen\"", "cpuset 'fifteen' is not an hwloc bitmap (0x0000ffff,0x...)"},
      {"cpuset=\"0x0000000f\"", "cpuset=\",0x0000000f\"", "cpuset ',0x0000000f' is not an hwloc bitmap"},
      {"cpuset=\"0x0000000f\"", "cpuset=\"0x0000000fff\"", "cpuset '0x0000000fff' is not an hwloc bitmap"},
      {"nodeset=\"0x00000001\"", "nodeset=\"\"", "nodeset '' is not an hwloc bitmap"},
      {"os_index=\"0\"", "os_index=\"-1\"", "os_index '-1' is not a whole number"},
      {"gp_index=\"2\"", "gp_index=\"two\"", "gp_index 'two' is not a whole number"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.to);
    std::string text = original;
    const std::size_t at = text.find(c.from);
    ASSERT_NE(at, std::string::npos);
    text.replace(at, c.from.size(), c.to);
    const std::size_t line =
        static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n')) + 1;
    const std::string file = dir.write("garbled.xml", text);
    const std::string expected = file + ":" + std::to_string(line) + ": " + c.message;
    EXPECT_EQ(usage_error_of(file).substr(0, expected.size()), expected);
  }
  // What real exports contain passes: empty words, the infinite prefix, wide PCI domains.
  for (const char* good : {"cpuset=\"0x00000001,,0x0\"", "cpuset=\"0xf...f\"", "cpuset=\"0xf...f,0x0000000f\"",
                           "cpuset=\"0xf...f,,0x0000000f\""}) {
    std::string text = original;
    const std::string from = "cpuset=\"0x0000000f\"";
    text.replace(text.find(from), from.size(), good);
    EXPECT_EQ(usage_error_of(dir.write("good.xml", text)), "(accepted)") << good;
  }
  std::string wide = original;
  wide.replace(wide.find("pci_busid=\"0000:87:00.0\""), 24, "pci_busid=\"10000:87:00.0\"");
  EXPECT_EQ(usage_error_of(dir.write("wide.xml", wide)), "(accepted)");
}

TEST(HwlocProbe, ThisMachineNeverThrows) {
  REQUIRE_HWLOC();
  const NodeTopology node = probe_hwloc("");
  EXPECT_FALSE(node.hostname.empty());
  EXPECT_FALSE(node.numa_nodes.empty());
  EXPECT_NE(node.sources.front().find("(this machine)"), std::string::npos);
}

TEST(HwlocProbe, NvlinkGenerationFromModelNames) {
  EXPECT_EQ(nvlink_generation_from_model("Tesla P100-SXM2-16GB"), 1);
  EXPECT_EQ(nvlink_generation_from_model("Tesla V100-SXM3-32GB-H"), 2);
  EXPECT_EQ(nvlink_generation_from_model("NVIDIA A100-SXM4-80GB"), 3);
  EXPECT_EQ(nvlink_generation_from_model("NVIDIA H200"), 4);
  EXPECT_EQ(nvlink_generation_from_model("NVIDIA GH200 480GB"), 4);
  EXPECT_EQ(nvlink_generation_from_model("NVIDIA B200"), 5);
  EXPECT_EQ(nvlink_generation_from_model("NVIDIA L40S"), 0);
  EXPECT_TRUE(known_pci_base_class(0x03));
  EXPECT_TRUE(known_pci_base_class(0xff));
  EXPECT_FALSE(known_pci_base_class(0x99));
}

// ---- Real topologies from the hwloc project (../shared/fixtures/hwloc) ----

TEST(SharedHwlocFixtures, Dgx2SixteenV100sBehindNvswitches) {
  REQUIRE_SHARED("nvidiaDGX2.xml");
  const NodeTopology node = probe_hwloc(kShared + "nvidiaDGX2.xml");
  ASSERT_EQ(node.gpus.size(), 16u);
  EXPECT_EQ(node.gpus[0].bus_id, "0000:34:00.0");
  EXPECT_EQ(node.gpus[0].model, "Tesla V100-SXM3-32GB-H");
  EXPECT_EQ(node.gpus[0].nvlink_generation, 2);
  for (std::size_t g = 0; g < 16; ++g) EXPECT_EQ(nvlinks_to_switches(node, static_cast<int>(g)), 6) << g;
  const auto matrix = matrix_entries(node);
  for (std::size_t i = 0; i < 16; ++i) {
    for (std::size_t j = 0; j < 16; ++j) EXPECT_EQ(matrix[i][j], i == j ? "X" : "NV6") << i << "," << j;
  }
  // Under NVLink, the PCIe tree: GPUs 34 and 36 share the last PLX switch; 34 and 39
  // meet one switch level higher; the two halves of a board meet at the host bridge only
  // across sockets.
  EXPECT_EQ(pci_path_class(node, node.gpus[0].pci, node.gpus[1].pci), PathClass::pix);
  EXPECT_EQ(pci_path_class(node, node.gpus[0].pci, node.gpus[2].pci), PathClass::pxb);
  EXPECT_EQ(pci_path_class(node, node.gpus[0].pci, node.gpus[8].pci), PathClass::sys);
  EXPECT_EQ(node.gpus[8].cpus, (std::vector<int>{24, 25}));
  // Xeon Platinum (Skylake-SP): CPUID family 6, model 85, as hwloc's x86 backend wrote them.
  EXPECT_EQ(node.cpu_type.architecture, "x86_64");
  EXPECT_EQ(node.cpu_type.vendor, "GenuineIntel");
  EXPECT_EQ(node.cpu_type.family, 6);
  EXPECT_EQ(node.cpu_type.model, 85);
}

TEST(SharedHwlocFixtures, Power8P100sWithNvlinkToEachOtherAndTheCpu) {
  REQUIRE_SHARED("power8gpudistances.xml");
  const NodeTopology node = probe_hwloc(kShared + "power8gpudistances.xml");
  ASSERT_EQ(node.gpus.size(), 4u);
  EXPECT_EQ(node.gpus[0].nvlink_generation, 1);
  const auto matrix = matrix_entries(node);
  EXPECT_EQ(matrix[0], (std::vector<std::string>{"X", "NV2", "SYS", "SYS"}));
  EXPECT_EQ(matrix[2], (std::vector<std::string>{"SYS", "SYS", "X", "NV2"}));
  int cpu_links = 0;
  for (const NvlinkGroup& g : node.nvlinks) cpu_links += (g.gpu == 0 && g.peer == NvlinkPeer::cpu) ? g.links : 0;
  EXPECT_EQ(cpu_links, 2);  // 40000 MB/s to its Package at 20 GB/s per NVLink 1 link
}

TEST(SharedHwlocFixtures, XeonWithGpuAndHcaUnderOneBridge) {
  REQUIRE_SHARED("32em64t-2n8c2t-pci-wholeio.xml");
  const NodeTopology node = probe_hwloc(kShared + "32em64t-2n8c2t-pci-wholeio.xml");
  ASSERT_EQ(node.gpus.size(), 3u);
  ASSERT_EQ(node.nics.size(), 1u);
  const auto matrix = matrix_entries(node);
  EXPECT_EQ(matrix[0], (std::vector<std::string>{"X", "SYS", "SYS", "SYS"}));
  EXPECT_EQ(matrix[1], (std::vector<std::string>{"SYS", "X", "PHB", "PHB"}));
  EXPECT_EQ(matrix[2], (std::vector<std::string>{"SYS", "PHB", "X", "PIX"}));
}

TEST(SharedHwlocFixtures, OlderConnectXReportedAsInfinibandControllerIsANic) {
  REQUIRE_SHARED("24em64t-2n6c2t-pci.xml");
  const NodeTopology node = probe_hwloc(kShared + "24em64t-2n6c2t-pci.xml");
  ASSERT_EQ(node.nics.size(), 1u);
  EXPECT_EQ(node.nics[0].name, "mlx4_0");
  EXPECT_EQ(node.pci[static_cast<std::size_t>(node.nics[0].pci)].class_code, 0x0c06u);
  EXPECT_EQ(node.nics[0].netdevs, (std::vector<std::string>{"eth2", "ib0"}));
  ASSERT_EQ(node.gpus.size(), 3u);
  EXPECT_EQ(matrix_entries(node)[0][3], "PHB");
}

TEST(SharedHwlocFixtures, MachineWithoutNvidiaGpusHasNone) {
  REQUIRE_SHARED("96em64t-4n4d3ca2co-pci.xml");
  const NodeTopology node = probe_hwloc(kShared + "96em64t-4n4d3ca2co-pci.xml");
  EXPECT_TRUE(node.gpus.empty());
  EXPECT_EQ(node.numa_nodes.size(), 4u);
  EXPECT_FALSE(node.pci.empty());
}

}  // namespace
}  // namespace commbench
