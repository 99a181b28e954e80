#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "commbench/core/error.hpp"
#include "commbench/topology/nccl_topo_xml.hpp"
#include "temp_dir.hpp"
#include "usage_error.hpp"

namespace commbench {
namespace {

namespace fs = std::filesystem;

const std::string kFixtures = std::string(COMMBENCH_TOPOLOGY_FIXTURES) + "/nccl";

NodeTopology from_text(const std::string& text) { return nccl_topo_from_xml(parse_xml(text, "x.xml"), "x.xml"); }

std::string load_error(const std::string& text) {
  return testing::usage_error_of([&] { from_text(text); });
}

// A minimal valid dump around `inner`, which starts on line 3 inside a <cpu>.
std::string in_cpu(const std::string& inner) {
  return "<system version=\"1\">\n"
         "  <cpu numaid=\"0\" affinity=\"0000000f\">\n" +
         inner +
         "  </cpu>\n"
         "</system>\n";
}

std::vector<int> range(int first, int last) {
  std::vector<int> out;
  for (int i = first; i <= last; ++i) out.push_back(i);
  return out;
}

TEST(NcclTopoXml, LoadsTheDgxH100Fixture) {
  const std::string path = kFixtures + "/dgx-h100.xml";
  const NodeTopology topo = load_nccl_topo_xml(path);
  const std::vector<std::string> gpu_bus{"18", "2a", "3a", "5d", "9a", "ab", "ba", "db"};
  const std::vector<std::string> nic_bus{"19", "2b", "3b", "5e", "9b", "ac", "bb", "dc"};
  const std::vector<std::string> switch_bus{"17", "29", "39", "5c", "99", "aa", "b9", "da"};

  EXPECT_EQ(topo.hostname, "");
  ASSERT_EQ(topo.numa_nodes.size(), 2u);
  EXPECT_EQ(topo.numa_nodes[0].os_index, 0);
  EXPECT_EQ(topo.numa_nodes[0].cpus, range(0, 3));
  EXPECT_EQ(topo.numa_nodes[1].os_index, 1);
  EXPECT_EQ(topo.numa_nodes[1].cpus, range(4, 7));

  // Document order: each switch, then its GPU, then its NIC.
  ASSERT_EQ(topo.pci.size(), 24u);
  for (int i = 0; i < 8; ++i) {
    SCOPED_TRACE("pair " + std::to_string(i));
    const int numa = i < 4 ? 0 : 1;
    const PciObject& sw = topo.pci[static_cast<std::size_t>(3 * i)];
    EXPECT_EQ(sw.kind, PciKind::bridge);
    EXPECT_EQ(sw.parent, -1);
    EXPECT_EQ(sw.numa, numa);
    EXPECT_EQ(sw.bus_id, "0000:" + switch_bus[static_cast<std::size_t>(i)] + ":00.0");
    EXPECT_EQ(sw.class_code, 0x0604u);
    EXPECT_EQ(sw.vendor, 0x1000u);
    EXPECT_EQ(sw.device_id, 0xc030u);
    EXPECT_EQ(sw.link_generation, 5);
    EXPECT_EQ(sw.link_width, 16);
    EXPECT_DOUBLE_EQ(sw.link_gbps, 63.0);

    const Gpu& gpu = topo.gpus.at(static_cast<std::size_t>(i));
    EXPECT_EQ(gpu.index, i);
    EXPECT_EQ(gpu.bus_id, "0000:" + gpu_bus[static_cast<std::size_t>(i)] + ":00.0");
    EXPECT_EQ(gpu.pci, 3 * i + 1);
    EXPECT_EQ(gpu.numa, numa);
    EXPECT_EQ(gpu.cpus, numa == 0 ? range(0, 3) : range(4, 7));
    EXPECT_EQ(gpu.sm, 90);
    EXPECT_EQ(gpu.nvlink_generation, 4);
    EXPECT_EQ(gpu.model, "");
    EXPECT_EQ(gpu.source, "nccl-topo-xml");
    const PciObject& gpu_pci = topo.pci[static_cast<std::size_t>(gpu.pci)];
    EXPECT_EQ(gpu_pci.kind, PciKind::device);
    EXPECT_EQ(gpu_pci.bus_id, gpu.bus_id);
    EXPECT_EQ(gpu_pci.parent, 3 * i);
    EXPECT_EQ(gpu_pci.numa, numa);
    EXPECT_EQ(gpu_pci.class_code, 0x0302u);
    EXPECT_EQ(gpu_pci.vendor, 0x10deu);
    EXPECT_EQ(gpu_pci.device_id, 0x2330u);
    EXPECT_EQ(gpu_pci.link_generation, 5);
    EXPECT_EQ(gpu_pci.link_width, 16);
    EXPECT_DOUBLE_EQ(gpu_pci.link_gbps, 63.0);

    const NvlinkGroup& group = topo.nvlinks.at(static_cast<std::size_t>(i));
    EXPECT_EQ(group.gpu, i);
    EXPECT_EQ(group.remote_bus_id, "0000:05:00.0");
    EXPECT_EQ(group.peer, NvlinkPeer::nvswitch);
    EXPECT_EQ(group.links, 18);
    EXPECT_DOUBLE_EQ(group.gbps_per_link, 25.0);

    const Nic& nic = topo.nics.at(static_cast<std::size_t>(i));
    EXPECT_EQ(nic.name, "mlx5_" + std::to_string(i));
    EXPECT_EQ(nic.bus_id, "0000:" + nic_bus[static_cast<std::size_t>(i)] + ":00.0");
    EXPECT_EQ(nic.pci, 3 * i + 2);
    EXPECT_EQ(nic.numa, numa);
    EXPECT_EQ(nic.cpus, gpu.cpus);
    EXPECT_TRUE(nic.netdevs.empty());
    EXPECT_EQ(nic.source, "nccl-topo-xml");
    ASSERT_EQ(nic.ports.size(), 1u);
    EXPECT_EQ(nic.ports[0].port, 1);
    EXPECT_EQ(nic.ports[0].state_code, 4);
    EXPECT_EQ(nic.ports[0].state, "ACTIVE");
    EXPECT_TRUE(nic.ports[0].active());
    EXPECT_EQ(nic.ports[0].physical_state, "");
    EXPECT_EQ(nic.ports[0].link_layer, "");
    EXPECT_DOUBLE_EQ(nic.ports[0].rate_gbit, 400.0);
    EXPECT_DOUBLE_EQ(nic.ports[0].bandwidth_gbps(), 50.0);
    const PciObject& nic_pci = topo.pci[static_cast<std::size_t>(nic.pci)];
    EXPECT_EQ(nic_pci.bus_id, nic.bus_id);
    EXPECT_EQ(nic_pci.parent, 3 * i);
    EXPECT_EQ(nic_pci.class_code, 0x0207u);
    EXPECT_EQ(nic_pci.vendor, 0x15b3u);
    EXPECT_EQ(nic_pci.device_id, 0x1021u);
    EXPECT_DOUBLE_EQ(nic_pci.link_gbps, 63.0);
  }
  EXPECT_EQ(topo.gpus.size(), 8u);
  EXPECT_EQ(topo.nvlinks.size(), 8u);
  EXPECT_EQ(topo.nics.size(), 8u);
  EXPECT_TRUE(topo.p2p.empty());
  EXPECT_EQ(topo.sources,
            std::vector<std::string>{"nccl-topo-xml " + path + " (NCCL topology dump, format version 1)"});
  EXPECT_EQ(topo.pci_detail, PciTreeDetail::switches_only);
  EXPECT_EQ(topo.unknowns, (std::vector<std::string>{
                               "nccl-topo-xml " + path +
                                   ": the dump records no NIC port state: a listed port is taken as ACTIVE, since "
                                   "NCCL lists only the ports it found usable; physical state and link layer unknown",
                               "nccl-topo-xml " + path + ": no GPU P2P status and no GPU model names",
                               "nccl-topo-xml " + path +
                                   ": NCCL leaves host bridges and root ports out of the dump: whether two devices "
                                   "under one CPU share a host bridge (PHB) or not (NODE) is unknown, shown ?",
                           }));
}

TEST(NcclTopoXml, LoadsThePcieFixture) {
  const NodeTopology topo = load_nccl_topo_xml(kFixtures + "/pcie-4gpu.xml");
  EXPECT_EQ(topo.cpu_type.architecture, "x86_64");
  EXPECT_EQ(topo.cpu_type.vendor, "AuthenticAMD");
  EXPECT_EQ(topo.cpu_type.family, 25);
  EXPECT_EQ(topo.cpu_type.model, 1);
  ASSERT_EQ(topo.numa_nodes.size(), 2u);
  EXPECT_EQ(topo.numa_nodes[0].cpus, range(0, 3));
  EXPECT_EQ(topo.numa_nodes[1].cpus, range(4, 7));

  // switch, GPU 0, GPU 1, NIC, GPU 2, GPU 3
  ASSERT_EQ(topo.pci.size(), 6u);
  const std::vector<std::string> bus{"0000:01:00.0", "0000:03:00.0", "0000:04:00.0",
                                     "0000:07:00.0", "0000:85:00.0", "0000:86:00.0"};
  const std::vector<int> parents{-1, 0, 0, -1, -1, -1};
  const std::vector<int> numas{0, 0, 0, 0, 1, 1};
  for (std::size_t i = 0; i < bus.size(); ++i) {
    SCOPED_TRACE(bus[i]);
    EXPECT_EQ(topo.pci[i].bus_id, bus[i]);
    EXPECT_EQ(topo.pci[i].parent, parents[i]);
    EXPECT_EQ(topo.pci[i].numa, numas[i]);
    EXPECT_EQ(topo.pci[i].link_generation, 4);
    EXPECT_EQ(topo.pci[i].link_width, 16);
    EXPECT_DOUBLE_EQ(topo.pci[i].link_gbps, 31.5);
  }
  EXPECT_EQ(topo.pci[0].kind, PciKind::bridge);
  EXPECT_EQ(topo.pci[0].vendor, 0x1000u);
  EXPECT_EQ(topo.pci[0].device_id, 0xc010u);

  ASSERT_EQ(topo.gpus.size(), 4u);
  const std::vector<int> gpu_pci{1, 2, 4, 5};
  for (int i = 0; i < 4; ++i) {
    SCOPED_TRACE("GPU " + std::to_string(i));
    const Gpu& gpu = topo.gpus[static_cast<std::size_t>(i)];
    EXPECT_EQ(gpu.index, i);
    EXPECT_EQ(gpu.pci, gpu_pci[static_cast<std::size_t>(i)]);
    EXPECT_EQ(gpu.bus_id, bus[static_cast<std::size_t>(gpu.pci)]);
    EXPECT_EQ(gpu.sm, 89);
    EXPECT_EQ(gpu.nvlink_generation, 0);  // Ada with no NVLink
    EXPECT_EQ(gpu.numa, i < 2 ? 0 : 1);
    EXPECT_EQ(gpu.cpus, i < 2 ? range(0, 3) : range(4, 7));
    const PciObject& pci = topo.pci[static_cast<std::size_t>(gpu.pci)];
    EXPECT_EQ(pci.kind, PciKind::device);
    EXPECT_EQ(pci.class_code, 0x0302u);
    EXPECT_EQ(pci.device_id, 0x26b9u);
    EXPECT_DOUBLE_EQ(pci.link_gbps, 31.5);
  }
  EXPECT_TRUE(topo.nvlinks.empty());

  ASSERT_EQ(topo.nics.size(), 1u);
  const Nic& nic = topo.nics[0];
  EXPECT_EQ(nic.name, "mlx5_0");
  EXPECT_EQ(nic.bus_id, "0000:07:00.0");
  EXPECT_EQ(nic.pci, 3);
  EXPECT_EQ(nic.numa, 0);
  EXPECT_EQ(nic.cpus, range(0, 3));
  ASSERT_EQ(nic.ports.size(), 1u);
  EXPECT_DOUBLE_EQ(nic.ports[0].rate_gbit, 200.0);
  EXPECT_EQ(topo.pci[3].class_code, 0x0207u);
  EXPECT_EQ(topo.pci[3].device_id, 0x101bu);
}

TEST(NcclTopoXml, DecodesAffinityMasksLowestGroupLast) {
  const NodeTopology topo = from_text(
      "<system version=\"1\">\n"
      "  <cpu numaid=\"3\" affinity=\"00000001,80000000,00000003\"/>\n"
      "  <cpu numaid=\"1\" affinity=\"\"/>\n"
      "  <cpu numaid=\"2\"/>\n"
      "</system>\n");
  ASSERT_EQ(topo.numa_nodes.size(), 3u);  // sorted by os_index
  EXPECT_EQ(topo.numa_nodes[0].os_index, 1);
  EXPECT_TRUE(topo.numa_nodes[0].cpus.empty());
  EXPECT_EQ(topo.numa_nodes[1].os_index, 2);
  EXPECT_TRUE(topo.numa_nodes[1].cpus.empty());
  EXPECT_EQ(topo.numa_nodes[2].os_index, 3);
  EXPECT_EQ(topo.numa_nodes[2].cpus, (std::vector<int>{0, 1, 63, 64}));
}

TEST(NcclTopoXml, ReadsWhatOlderAndNewerNcclVersionsWrite) {
  const NodeTopology topo = from_text(
      "<system version=\"2\" name=\"future\">\n"
      "  <cpu host_hash=\"0x1\" numaid=\"-1\" arch=\"arm64\" future=\"yes\">\n"
      "    <pci busid=\"00000000:0A:00.0\" link_speed=\"8 GT/s\" link_width=\"16\">\n"
      "      <pcilink target=\"0000:0b:00.0\"/>\n"
      "      <pci busid=\"0000:0B:00.0\" class=\"0x03\" link_speed=\"\" link_width=\"\">\n"
      "        <gpu dev=\"1\" sm=\"80\" rank=\"1\" gdr=\"1\" mystery=\"42\">\n"
      "          <nvlink target=\"0000:0C:00.0\" count=\"4\" tclass=\"0x030200\"/>\n"
      "          <nvlink target=\"0000:0c:00.0\" count=\"2\" tclass=\"0x030200\"/>\n"
      "          <nvlink target=\"fffffff:ffff:ff\" count=\"6\" tclass=\"0x068000\"/>\n"
      "          <nvlink target=\"0000:00:00.0\" count=\"1\" tclass=\"0x068001\"/>\n"
      "          <nvlink count=\"1\"/>\n"
      "          <c2c bw=\"1000\" count=\"10\"/>\n"
      "        </gpu>\n"
      "      </pci>\n"
      "      <pci busid=\"0000:0c:00.0\" class=\"0x030000\" link_speed=\"Unknown\" link_width=\"0\">\n"
      "        <gpu dev=\"0\" sm=\"80\"/>\n"
      "      </pci>\n"
      "    </pci>\n"
      "    <nic>\n"
      "      <net name=\"eth0\" dev=\"0\" speed=\"-1\"/>\n"
      "      <gin name=\"gin0\" dev=\"1\"/>\n"
      "    </nic>\n"
      "    <future-element><gpu dev=\"0\"/></future-element>\n"
      "  </cpu>\n"
      "  <cpu numaid=\"0\"/>\n"
      "</system>\n");
  ASSERT_EQ(topo.numa_nodes.size(), 1u);  // numaid -1 is no NUMA node
  EXPECT_EQ(topo.numa_nodes[0].os_index, 0);
  ASSERT_EQ(topo.unknowns.size(), 4u);
  EXPECT_EQ(topo.unknowns[0],
            "nccl-topo-xml x.xml: <cpu> at line 2 has numaid -1: the NUMA node of the devices under it is unknown");
  EXPECT_EQ(topo.sources, std::vector<std::string>{"nccl-topo-xml x.xml (NCCL topology dump, format version 2)"});

  ASSERT_EQ(topo.pci.size(), 3u);
  // No class: a <pci> with <pci> children is a bridge. "8 GT/s" is how kernels <= 5.6 wrote Gen3.
  EXPECT_EQ(topo.pci[0].bus_id, "0000:0a:00.0");
  EXPECT_EQ(topo.pci[0].kind, PciKind::bridge);
  EXPECT_EQ(topo.pci[0].class_code, 0u);
  EXPECT_EQ(topo.pci[0].numa, -1);
  EXPECT_EQ(topo.pci[0].link_generation, 3);
  EXPECT_DOUBLE_EQ(topo.pci[0].link_gbps, 15.75);
  // NCCL's fallback class "0x03" (no sysfs entry) and empty link attributes.
  EXPECT_EQ(topo.pci[1].bus_id, "0000:0b:00.0");
  EXPECT_EQ(topo.pci[1].kind, PciKind::device);
  EXPECT_EQ(topo.pci[1].class_code, 0x0300u);
  EXPECT_EQ(topo.pci[1].parent, 0);
  EXPECT_EQ(topo.pci[1].link_generation, 0);
  EXPECT_EQ(topo.pci[1].link_width, 0);
  EXPECT_EQ(topo.pci[1].link_gbps, 0.0);
  EXPECT_EQ(topo.pci[2].link_generation, 0);
  EXPECT_EQ(topo.pci[2].link_gbps, 0.0);

  ASSERT_EQ(topo.gpus.size(), 2u);  // sorted by dev; the <gpu> in <future-element> is skipped
  EXPECT_EQ(topo.gpus[0].index, 0);
  EXPECT_EQ(topo.gpus[0].bus_id, "0000:0c:00.0");
  EXPECT_EQ(topo.gpus[0].nvlink_generation, 0);  // Ampere, but no NVLink listed
  EXPECT_EQ(topo.gpus[1].index, 1);
  EXPECT_EQ(topo.gpus[1].bus_id, "0000:0b:00.0");
  EXPECT_EQ(topo.gpus[1].nvlink_generation, 3);
  EXPECT_EQ(topo.gpus[1].numa, -1);
  EXPECT_TRUE(topo.gpus[1].cpus.empty());

  ASSERT_EQ(topo.nvlinks.size(), 4u);
  // Two entries for the same GPU peer are counted together.
  EXPECT_EQ(topo.nvlinks[0].remote_bus_id, "0000:0c:00.0");
  EXPECT_EQ(topo.nvlinks[0].peer, NvlinkPeer::gpu);
  EXPECT_EQ(topo.nvlinks[0].links, 6);
  EXPECT_DOUBLE_EQ(topo.nvlinks[0].gbps_per_link, 25.0);
  EXPECT_EQ(topo.nvlinks[1].remote_bus_id, "");  // the remote end was invisible to NCCL
  EXPECT_EQ(topo.nvlinks[1].peer, NvlinkPeer::nvswitch);
  EXPECT_EQ(topo.nvlinks[1].links, 6);
  EXPECT_EQ(topo.nvlinks[2].peer, NvlinkPeer::cpu);
  EXPECT_EQ(topo.nvlinks[3].peer, NvlinkPeer::unknown);
  EXPECT_EQ(topo.nvlinks[3].remote_bus_id, "");
  for (const NvlinkGroup& group : topo.nvlinks) EXPECT_EQ(group.gpu, 1);

  ASSERT_EQ(topo.nics.size(), 1u);  // <gin> is not a network device of its own
  EXPECT_EQ(topo.nics[0].name, "eth0");
  EXPECT_EQ(topo.nics[0].pci, -1);
  EXPECT_EQ(topo.nics[0].bus_id, "");
  EXPECT_EQ(topo.nics[0].numa, -1);
  ASSERT_EQ(topo.nics[0].ports.size(), 1u);
  EXPECT_EQ(topo.nics[0].ports[0].port, 1);
  EXPECT_EQ(topo.nics[0].ports[0].rate_gbit, 0.0);  // speed -1: unknown
}

TEST(NcclTopoXml, NvlinkGenerationFollowsComputeCapability) {
  const std::vector<std::pair<int, int>> expected{{60, 1}, {70, 2}, {75, 2},  {80, 3},  {86, 3}, {87, 3},
                                                  {89, 3}, {90, 4}, {100, 5}, {103, 5}, {61, 0}, {120, 0}};
  for (const auto& [sm, generation] : expected) {
    SCOPED_TRACE("sm " + std::to_string(sm));
    const NodeTopology topo =
        from_text(in_cpu("    <pci busid=\"0000:18:00.0\" class=\"0x030200\">\n"
                         "      <gpu dev=\"0\" sm=\"" +
                         std::to_string(sm) +
                         "\"><nvlink target=\"0000:05:00.0\" count=\"2\" tclass=\"0x068000\"/></gpu>\n"
                         "    </pci>\n"));
    ASSERT_EQ(topo.gpus.size(), 1u);
    EXPECT_EQ(topo.gpus[0].nvlink_generation, generation);
    ASSERT_EQ(topo.nvlinks.size(), 1u);
    EXPECT_DOUBLE_EQ(topo.nvlinks[0].gbps_per_link, generation == 0   ? 0.0
                                                    : generation == 1 ? 20.0
                                                    : generation == 5 ? 50.0
                                                                      : 25.0);
  }
}

struct BadInput {
  std::string inner;    // placed at line 3, inside <cpu numaid="0">
  std::string message;  // the whole message
};

TEST(NcclTopoXml, RejectsBadInputNamingFileAndLine) {
  const std::string gpu_pci = "    <pci busid=\"0000:18:00.0\" class=\"0x030200\">\n";
  const std::vector<BadInput> cases{
      {"    <pci class=\"0x030200\"/>\n", "x.xml:3: <pci> has no busid attribute"},
      {"    <pci busid=\"18:00.0\"/>\n",
       "x.xml:3: <pci> busid=\"18:00.0\": expected a PCI bus id such as 0000:18:00.0"},
      {"    <pci busid=\"0000:18:00.0 \"/>\n",
       "x.xml:3: <pci> busid=\"0000:18:00.0 \": expected a PCI bus id such as 0000:18:00.0"},
      {"    <pci busid=\"0000:18:0g.0\"/>\n",
       "x.xml:3: <pci> busid=\"0000:18:0g.0\": expected a PCI bus id such as 0000:18:00.0"},
      {"    <pci busid=\"0000:18:00.0\" class=\"garbage\"/>\n",
       "x.xml:3: <pci> class=\"garbage\": expected 0x and 6 hex digits (e.g. 0x030200)"},
      {"    <pci busid=\"0000:18:00.0\" class=\"0x03zz00\"/>\n",
       "x.xml:3: <pci> class=\"0x03zz00\": expected 0x and 6 hex digits (e.g. 0x030200)"},
      {"    <pci busid=\"0000:18:00.0\" class=\"0x0302\"/>\n",
       "x.xml:3: <pci> class=\"0x0302\": expected 0x and 6 hex digits (e.g. 0x030200)"},
      {"    <pci busid=\"0000:18:00.0\" class=\"0x990000\"/>\n", "x.xml:3: unknown PCI class 0x990000"},
      {"    <pci busid=\"0000:18:00.0\" class=\"0x140000\"/>\n", "x.xml:3: unknown PCI class 0x140000"},
      {"    <pci busid=\"0000:18:00.0\" vendor=\"10de\"/>\n",
       "x.xml:3: <pci> vendor=\"10de\": expected 0x and up to 4 hex digits (e.g. 0x10de)"},
      {"    <pci busid=\"0000:18:00.0\" device=\"0x123456\"/>\n",
       "x.xml:3: <pci> device=\"0x123456\": expected 0x and up to 4 hex digits (e.g. 0x10de)"},
      {"    <pci busid=\"0000:18:00.0\" link_speed=\"12.0 GT/s PCIe\"/>\n",
       "x.xml:3: unknown link_speed \"12.0 GT/s PCIe\" (expected e.g. \"16.0 GT/s PCIe\")"},
      {"    <pci busid=\"0000:18:00.0\" link_speed=\"fast\"/>\n",
       "x.xml:3: unknown link_speed \"fast\" (expected e.g. \"16.0 GT/s PCIe\")"},
      {"    <pci busid=\"0000:18:00.0\" link_width=\"x16\"/>\n",
       "x.xml:3: <pci> link_width=\"x16\": expected a lane count from 0 to 32"},
      {"    <pci busid=\"0000:18:00.0\" link_width=\"64\"/>\n",
       "x.xml:3: <pci> link_width=\"64\": expected a lane count from 0 to 32"},
      {"    <pci busid=\"0000:18:00.0\"/>\n    <pci busid=\"0000:17:00.0\">\n      <pci busid=\"0000:18:00.0\"/>\n    "
       "</pci>\n",
       "x.xml:5: PCI bus id 0000:18:00.0 listed twice (lines 3 and 5)"},
      {"    <pci busid=\"0000:18:00.0\"/>\n    <pci busid=\"00000000:18:00.0\"/>\n",
       "x.xml:4: PCI bus id 0000:18:00.0 listed twice (lines 3 and 4)"},
      {gpu_pci + "      <gpu sm=\"90\"/>\n    </pci>\n", "x.xml:4: <gpu> has no dev attribute"},
      {gpu_pci + "      <gpu dev=\"-1\"/>\n    </pci>\n", "x.xml:4: <gpu> dev=\"-1\": expected a non-negative integer"},
      {gpu_pci + "      <gpu dev=\"one\"/>\n    </pci>\n",
       "x.xml:4: <gpu> dev=\"one\": expected a non-negative integer"},
      {gpu_pci + "      <gpu dev=\"99999999999\"/>\n    </pci>\n",
       "x.xml:4: <gpu> dev=\"99999999999\": expected a non-negative integer"},
      {gpu_pci + "      <gpu dev=\"0\" sm=\"9.0\"/>\n    </pci>\n",
       "x.xml:4: <gpu> sm=\"9.0\": expected a compute capability times 10 (e.g. 90)"},
      {gpu_pci + "      <gpu dev=\"0\" sm=\"-90\"/>\n    </pci>\n",
       "x.xml:4: <gpu> sm=\"-90\": expected a compute capability times 10 (e.g. 90)"},
      {gpu_pci +
           "      <gpu dev=\"3\"/>\n    </pci>\n    <pci busid=\"0000:19:00.0\">\n      <gpu dev=\"3\"/>\n    </pci>\n",
       "x.xml:7: GPU 3 listed twice (lines 4 and 7)"},
      {gpu_pci + "      <gpu dev=\"0\"/>\n      <gpu dev=\"1\"/>\n    </pci>\n",
       "x.xml:5: GPU at 0000:18:00.0 listed twice (lines 4 and 5)"},
      {gpu_pci + "      <gpu dev=\"0\"><nvlink target=\"0000:05:00.0\" tclass=\"0x068000\"/></gpu>\n    </pci>\n",
       "x.xml:4: <nvlink> has no count attribute"},
      {gpu_pci + "      <gpu dev=\"0\"><nvlink count=\"-2\"/></gpu>\n    </pci>\n",
       "x.xml:4: <nvlink> count=\"-2\": expected a link count from 1 to 1024"},
      {gpu_pci + "      <gpu dev=\"0\"><nvlink count=\"0\"/></gpu>\n    </pci>\n",
       "x.xml:4: <nvlink> count=\"0\": expected a link count from 1 to 1024"},
      {gpu_pci + "      <gpu dev=\"0\"><nvlink count=\"many\"/></gpu>\n    </pci>\n",
       "x.xml:4: <nvlink> count=\"many\": expected a link count from 1 to 1024"},
      {gpu_pci + "      <gpu dev=\"0\"><nvlink count=\"1\" tclass=\"0x990000\"/></gpu>\n    </pci>\n",
       "x.xml:4: unknown PCI class 0x990000 in <nvlink> tclass"},
      {gpu_pci + "      <gpu dev=\"0\"><nvlink count=\"1\" target=\"nvswitch0\"/></gpu>\n    </pci>\n",
       "x.xml:4: <nvlink> target=\"nvswitch0\": expected a PCI bus id such as 0000:05:00.0"},
      {gpu_pci + "      <gpu dev=\"0\">\n" + std::string("        <nvlink target=\"0000:05:00.0\" count=\"1000\"/>\n") +
           "        <nvlink target=\"0000:05:00.0\" count=\"1000\"/>\n      </gpu>\n    </pci>\n",
       "x.xml:6: more than 1024 NVLinks from GPU 0 to 0000:05:00.0"},
      {"    <gpu dev=\"0\"/>\n", "x.xml:3: <gpu> inside <cpu>: NCCL writes <gpu> only inside <pci>"},
      {"    <pci busid=\"0000:19:00.0\">\n      <net name=\"mlx5_0\"/>\n    </pci>\n",
       "x.xml:4: <net> inside <pci>: NCCL writes <net> only inside <nic>"},
      {"    <pci busid=\"0000:19:00.0\">\n      <nvlink count=\"1\"/>\n    </pci>\n",
       "x.xml:4: <nvlink> inside <pci>: NCCL writes <nvlink> only inside <gpu>"},
      {"    <cpu numaid=\"1\"/>\n", "x.xml:3: <cpu> inside <cpu>: NCCL writes <cpu> only inside <system>"},
      {"    <nic><net dev=\"0\"/></nic>\n", "x.xml:3: <net> has no name attribute"},
      {"    <nic><net name=\"\"/></nic>\n", "x.xml:3: <net> has an empty name"},
      {"    <nic><net name=\"mlx5_0\" speed=\"fast\"/></nic>\n",
       "x.xml:3: <net> speed=\"fast\": expected a speed in Mb/s (or -1 when unknown)"},
      {"    <nic><net name=\"mlx5_0\" speed=\"-5\"/></nic>\n",
       "x.xml:3: <net> speed=\"-5\": expected a speed in Mb/s (or -1 when unknown)"},
      {"    <nic><net name=\"mlx5_0\" port=\"one\"/></nic>\n", "x.xml:3: <net> port=\"one\": expected a port number"},
      {"    <nic>\n      <net name=\"mlx5_0\"/>\n      <net name=\"mlx5_0\"/>\n    </nic>\n",
       "x.xml:5: NIC mlx5_0 listed twice (lines 4 and 5)"},
  };
  for (const BadInput& c : cases) {
    SCOPED_TRACE(c.inner);
    EXPECT_EQ(load_error(in_cpu(c.inner)), c.message);
  }
}

TEST(NcclTopoXml, RejectsBadSystemAndCpuElements) {
  EXPECT_EQ(load_error("<topology/>"),
            "x.xml:1: root element is <topology>, expected <system> (not an NCCL topology dump?)");
  EXPECT_EQ(load_error("<system version=\"one\"/>"),
            "x.xml:1: <system> version=\"one\": expected a non-negative integer");
  EXPECT_EQ(load_error("<system>\n  <gpu dev=\"0\"/>\n</system>"),
            "x.xml:2: <gpu> inside <system>: NCCL writes <gpu> only inside <pci>");
  EXPECT_EQ(load_error("<system>\n  <cpu/>\n</system>"), "x.xml:2: <cpu> has no numaid attribute");
  EXPECT_EQ(load_error("<system>\n  <cpu numaid=\"-2\"/>\n</system>"),
            "x.xml:2: <cpu> numaid=\"-2\": expected a NUMA node number (-1 when unknown)");
  EXPECT_EQ(load_error("<system>\n  <cpu numaid=\"0\"/>\n  <cpu numaid=\"0\"/>\n</system>"),
            "x.xml:3: <cpu> numaid 0 listed twice (lines 2 and 3)");
  EXPECT_EQ(load_error("<system>\n  <cpu numaid=\"0\" vendor=\"GenuineIntel\" familyid=\"six\"/>\n</system>"),
            "x.xml:2: <cpu> familyid=\"six\": expected a CPUID family number");
  EXPECT_EQ(load_error("<system>\n  <cpu numaid=\"0\" vendor=\"GenuineIntel\" modelid=\"-143\"/>\n</system>"),
            "x.xml:2: <cpu> modelid=\"-143\": expected a CPUID model number");
  // Only the first <cpu> gives the node's CPU type, but a bad number on a later one is refused too.
  EXPECT_EQ(load_error("<system>\n  <cpu numaid=\"0\" vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"143\"/>\n"
                       "  <cpu numaid=\"1\" vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"8f\"/>\n</system>"),
            "x.xml:3: <cpu> modelid=\"8f\": expected a CPUID model number");
  const std::string mask_error =
      "\": expected a CPU mask of comma-separated 32-bit hex groups (e.g. 00000000,0000ffff)";
  for (const std::string mask : {"xyz", "123456789", "0000ffff,", ",0000ffff", "0000 ffff", "0x0000ffff"})
    EXPECT_EQ(load_error("<system>\n  <cpu numaid=\"0\" affinity=\"" + mask + "\"/>\n</system>"),
              "x.xml:2: <cpu> affinity=\"" + mask + mask_error);
  std::string long_mask = "1";
  for (int i = 0; i < 4096; ++i) long_mask += ",0";
  EXPECT_EQ(load_error("<system>\n  <cpu numaid=\"0\" affinity=\"" + long_mask + "\"/>\n</system>"),
            "x.xml:2: <cpu> affinity=\"" + long_mask.substr(0, 64) + "..." + mask_error);
}

TEST(NcclTopoXml, BoundsWorkAndMemoryOnHostileDumps) {
  // A maximal affinity mask (131072 CPUs) copied to every GPU: the 128th GPU would take
  // the copies past 2^24 entries.
  std::string mask = "ffffffff";
  for (int i = 1; i < 4096; ++i) mask += ",ffffffff";
  std::string many_gpus = "<system>\n<cpu numaid=\"0\" affinity=\"" + mask + "\">\n";
  for (int i = 0; i < 200; ++i) {
    char bus[16];
    std::snprintf(bus, sizeof bus, "0000:%02x:00.0", i);
    many_gpus += "<pci busid=\"" + std::string(bus) + "\"><gpu dev=\"" + std::to_string(i) + "\"/></pci>\n";
  }
  many_gpus += "</cpu>\n</system>\n";
  EXPECT_EQ(load_error(many_gpus),
            "x.xml:130: more than 16777216 CPU entries over all devices (affinity masks too long or too many devices)");

  // 100000 NVLink targets on one GPU merge by lookup, not by rescanning earlier ones.
  std::string many_links = "<system>\n<cpu numaid=\"0\">\n<pci busid=\"0000:18:00.0\">\n<gpu dev=\"0\" sm=\"90\">\n";
  for (int i = 0; i < 100000; ++i) {
    char bus[16];
    std::snprintf(bus, sizeof bus, "0000:%02x:%02x.%x", (i >> 11) & 0xff, (i >> 3) & 0xff, i & 0x7);  // function 0..7
    many_links += "<nvlink target=\"" + std::string(bus) + "\" count=\"1\" tclass=\"0x068000\"/>\n";
  }
  many_links += "<nvlink target=\"0000:00:00.0\" count=\"2\" tclass=\"0x068000\"/>\n";
  many_links += "</gpu>\n</pci>\n</cpu>\n</system>\n";
  const auto start = std::chrono::steady_clock::now();
  const NodeTopology topo = from_text(many_links);
  const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(topo.nvlinks.size(), 100000u);
  EXPECT_EQ(topo.nvlinks[0].remote_bus_id, "0000:00:00.0");
  EXPECT_EQ(topo.nvlinks[0].links, 3);
  EXPECT_LT(seconds, 20.0);  // generous for a debug build on a busy machine
}

using testing::TempDir;

TEST(NcclTopoXml, FileErrorsNameThePath) {
  const TempDir dir;
  // A dump cut off while NCCL was still writing it.
  std::ifstream in(kFixtures + "/dgx-h100.xml");
  std::string full((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string truncated = dir.write("truncated.xml", full.substr(0, full.find("<gpu dev=\"2\"")));
  try {
    load_nccl_topo_xml(truncated);
    FAIL() << "accepted";
  } catch (const UsageError& e) {
    // The file ends on line 29, inside the <pci> of GPU 2 (line 28, below its switch on line 27).
    EXPECT_EQ(std::string(e.what()), truncated + ":29: unexpected end of file inside <pci> (opened at line 28)");
  }
  const std::string missing_busid = dir.write("no-busid.xml", in_cpu("    <pci class=\"0x060400\"/>\n"));
  try {
    load_nccl_topo_xml(missing_busid);
    FAIL() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), missing_busid + ":3: <pci> has no busid attribute");
  }
  try {
    load_nccl_topo_xml(dir.write("empty.xml", ""));
    FAIL() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("empty.xml: empty file"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace commbench
