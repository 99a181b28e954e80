// The NCCL topology dump reader on bad input: each refusal names the file and line, and
// hostile dumps are bounded in work and memory.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "commbench/core/error.hpp"
#include "commbench/topology/nccl_topo_xml.hpp"
#include "nccl_topo_xml_test_support.hpp"
#include "temp_dir.hpp"

namespace commbench {
namespace {

using namespace nccl_topo_test;

struct BadInput {
  std::string inner;    // placed at line 3, inside <cpu numaid="0">
  std::string message;  // the whole message
};

// Each case's text, at line 3 of a minimal dump, is refused with its whole message.
void expect_refused(const std::vector<BadInput>& cases) {
  for (const BadInput& c : cases) {
    SCOPED_TRACE(c.inner);
    EXPECT_EQ(load_error(in_cpu(c.inner)), c.message);
  }
}

TEST(NcclTopoXml, RejectsBadPciElementsNamingFileAndLine) {
  expect_refused({
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
  });
}

TEST(NcclTopoXml, RejectsBadGpuAndNvlinkElementsNamingFileAndLine) {
  const std::string gpu_pci = "    <pci busid=\"0000:18:00.0\" class=\"0x030200\">\n";
  expect_refused({
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
  });
}

TEST(NcclTopoXml, RejectsBadNicsAndMisplacedElementsNamingFileAndLine) {
  expect_refused({
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
      {"    <nic><net name=\"mlx5_0\" guid=\"5c25730300d7f010\"/></nic>\n",
       "x.xml:3: <net> guid=\"5c25730300d7f010\": expected 0x and 1 to 16 hex digits (e.g. 0x5c25730300d7f010)"},
      {"    <nic><net name=\"mlx5_0\" guid=\"0x5c25730300d7f0100\"/></nic>\n",
       "x.xml:3: <net> guid=\"0x5c25730300d7f0100\": expected 0x and 1 to 16 hex digits (e.g. 0x5c25730300d7f010)"},
      {"    <nic>\n      <net name=\"mlx5_0\"/>\n      <net name=\"mlx5_0\"/>\n    </nic>\n",
       "x.xml:5: NIC mlx5_0 listed twice (lines 4 and 5)"},
  });
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

// A GPU with 100000 NVLink targets, the last one repeating the first's.
std::string many_nvlink_targets() {
  std::string many_links = "<system>\n<cpu numaid=\"0\">\n<pci busid=\"0000:18:00.0\">\n<gpu dev=\"0\" sm=\"90\">\n";
  for (int i = 0; i < 100000; ++i) {
    char bus[16];
    std::snprintf(bus, sizeof bus, "0000:%02x:%02x.%x", (i >> 11) & 0xff, (i >> 3) & 0xff, i & 0x7);  // function 0..7
    many_links += "<nvlink target=\"" + std::string(bus) + "\" count=\"1\" tclass=\"0x068000\"/>\n";
  }
  many_links += "<nvlink target=\"0000:00:00.0\" count=\"2\" tclass=\"0x068000\"/>\n";
  many_links += "</gpu>\n</pci>\n</cpu>\n</system>\n";
  return many_links;
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
  const NodeTopology topo = from_text(many_nvlink_targets());
  ASSERT_EQ(topo.nvlinks.size(), 100000u);
  EXPECT_EQ(topo.nvlinks[0].remote_bus_id, "0000:00:00.0");
  EXPECT_EQ(topo.nvlinks[0].links, 3);
}

// How long the merge of the test above takes, a judgement of speed (ctest label speed):
// rescanning earlier targets for each would take minutes.
TEST(NcclTopoXmlTiming, MergesManyNvlinkTargetsInLinearTime) {
  const std::string dump = many_nvlink_targets();
  const auto start = std::chrono::steady_clock::now();
  const NodeTopology topo = from_text(dump);
  const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(topo.nvlinks.size(), 100000u);
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
