// The NCCL topology dump reader on the fixtures NCCL wrote (tests/fixtures/topology/nccl)
// and on what older and newer NCCL versions write. Bad input: nccl_topo_xml_bad_input_test.cpp.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "commbench/topology/nccl_topo_xml.hpp"
#include "nccl_topo_xml_test_support.hpp"

namespace commbench {
namespace {

using namespace nccl_topo_test;

const std::vector<std::string> kDgxGpuBus{"18", "2a", "3a", "5d", "9a", "ab", "ba", "db"};
const std::vector<std::string> kDgxNicBus{"19", "2b", "3b", "5e", "9b", "ac", "bb", "dc"};
const std::vector<std::string> kDgxSwitchBus{"17", "29", "39", "5c", "99", "aa", "b9", "da"};

// The DGX H100 fixture's switch i, its GPU and the GPU's NVLinks to the NVSwitches.
void expect_dgx_h100_switch_and_gpu(const NodeTopology& topo, int i) {
  const int numa = i < 4 ? 0 : 1;
  const PciObject& sw = topo.pci[static_cast<std::size_t>(3 * i)];
  EXPECT_EQ(sw.kind, PciKind::bridge);
  EXPECT_EQ(sw.parent, -1);
  EXPECT_EQ(sw.numa, numa);
  EXPECT_EQ(sw.bus_id, "0000:" + kDgxSwitchBus[static_cast<std::size_t>(i)] + ":00.0");
  EXPECT_EQ(sw.class_code, 0x0604u);
  EXPECT_EQ(sw.vendor, 0x1000u);
  EXPECT_EQ(sw.device_id, 0xc030u);
  EXPECT_EQ(sw.link_generation, 5);
  EXPECT_EQ(sw.link_width, 16);
  EXPECT_DOUBLE_EQ(sw.link_gbps, 63.0);

  const Gpu& gpu = topo.gpus.at(static_cast<std::size_t>(i));
  EXPECT_EQ(gpu.index, i);
  EXPECT_EQ(gpu.bus_id, "0000:" + kDgxGpuBus[static_cast<std::size_t>(i)] + ":00.0");
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
}

// The DGX H100 fixture's NIC i, beside GPU i under switch i.
void expect_dgx_h100_nic(const NodeTopology& topo, int i) {
  const int numa = i < 4 ? 0 : 1;
  const Gpu& gpu = topo.gpus.at(static_cast<std::size_t>(i));
  const Nic& nic = topo.nics.at(static_cast<std::size_t>(i));
  EXPECT_EQ(nic.name, "mlx5_" + std::to_string(i));
  EXPECT_EQ(nic.bus_id, "0000:" + kDgxNicBus[static_cast<std::size_t>(i)] + ":00.0");
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

TEST(NcclTopoXml, LoadsTheDgxH100Fixture) {
  const std::string path = kFixtures + "/dgx-h100.xml";
  const NodeTopology topo = load_nccl_topo_xml(path);

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
    expect_dgx_h100_switch_and_gpu(topo, i);
    expect_dgx_h100_nic(topo, i);
  }
  EXPECT_EQ(topo.gpus.size(), 8u);
  EXPECT_EQ(topo.nvlinks.size(), 8u);
  EXPECT_EQ(topo.nics.size(), 8u);
  EXPECT_TRUE(topo.p2p.empty());
}

// What NCCL leaves out of its dump, said as unknowns.
TEST(NcclTopoXml, SaysWhatTheDgxH100DumpLacks) {
  const std::string path = kFixtures + "/dgx-h100.xml";
  const NodeTopology topo = load_nccl_topo_xml(path);
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

// A dump with what older and newer NCCL versions write: a later format version, unknown
// attributes and elements, fallback classes, empty link attributes, a NUMA node of -1.
std::string other_versions_dump() {
  return "<system version=\"2\" name=\"future\">\n"
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
         "</system>\n";
}

TEST(NcclTopoXml, ReadsWhatOlderAndNewerNcclVersionsWrite) {
  const NodeTopology topo = from_text(other_versions_dump());
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
}

TEST(NcclTopoXml, ReadsGpusAndNvlinksOfOlderAndNewerNcclVersions) {
  const NodeTopology topo = from_text(other_versions_dump());
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
}

TEST(NcclTopoXml, ReadsNicsOfOlderAndNewerNcclVersions) {
  const NodeTopology topo = from_text(other_versions_dump());
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

}  // namespace
}  // namespace commbench
