#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "commbench/core/pci_bus_id.hpp"
#include "commbench/topology/nvml_probe.hpp"

namespace commbench {
namespace {

TEST(NvmlHelpers, NvlinkVersionEnumToGeneration) {
  EXPECT_EQ(nvlink_generation_from_nvml_version(1), 1);
  EXPECT_EQ(nvlink_generation_from_nvml_version(2), 2);
  EXPECT_EQ(nvlink_generation_from_nvml_version(3), 2);
  EXPECT_EQ(nvlink_generation_from_nvml_version(4), 3);
  EXPECT_EQ(nvlink_generation_from_nvml_version(5), 3);
  EXPECT_EQ(nvlink_generation_from_nvml_version(6), 4);  // what an H100 reports
  EXPECT_EQ(nvlink_generation_from_nvml_version(7), 5);
  EXPECT_EQ(nvlink_generation_from_nvml_version(0), 0);
  EXPECT_EQ(nvlink_generation_from_nvml_version(8), 0);
  EXPECT_EQ(nvlink_generation_from_nvml_version(~0u), 0);
}

TEST(PciBusId, EverySourcesFormToOne) {
  EXPECT_EQ(canonical_pci_bus_id("00000000:34:00.0"), std::optional<std::string>("0000:34:00.0"));
  EXPECT_EQ(canonical_pci_bus_id("00000000:B3:00.0"), std::optional<std::string>("0000:b3:00.0"));
  EXPECT_EQ(canonical_pci_bus_id("0000:B3:00.0"), std::optional<std::string>("0000:b3:00.0"));  // busIdLegacy
  EXPECT_EQ(canonical_pci_bus_id("00000001:0A:1F.7"), std::optional<std::string>("0001:0a:1f.7"));
  EXPECT_EQ(canonical_pci_bus_id("0001E4B2:00:00.0"),
            std::optional<std::string>("1e4b2:00:00.0"));  // Hyper-V domains exceed 16 bits
  EXPECT_EQ(canonical_pci_bus_id("34:00.0"), std::optional<std::string>("0000:34:00.0"));
  EXPECT_EQ(canonical_pci_bus_id(std::string_view("00000000:34:00.0\0\0\0\0", 20)),
            std::optional<std::string>("0000:34:00.0"));
  for (const char* bad : {"", "garbage", "0000:34:00", "0000:34:00.8", "000000000:34:00.0", "0000:345:00.0",
                          "0000:34:00.0.0", "0000:3g:00.0", ":34:00.0", "0000::00.0", "0000:34:00.0 "})
    EXPECT_EQ(canonical_pci_bus_id(bad), std::nullopt) << bad;
  // Files must give every digit; a short form there is damage, not a style.
  EXPECT_EQ(canonical_pci_bus_id("0000:B3:00.0", PciBusIdSyntax::full), std::optional<std::string>("0000:b3:00.0"));
  EXPECT_EQ(canonical_pci_bus_id("10000:e0:1f.7", PciBusIdSyntax::full), std::optional<std::string>("10000:e0:1f.7"));
  for (const char* short_form : {"34:00.0", "0:34:00.0", "0000:3:00.0", "0000:34:0.0"})
    EXPECT_EQ(canonical_pci_bus_id(short_form, PciBusIdSyntax::full), std::nullopt) << short_form;
}

// Sets an environment variable for one test and restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

NodeTopology node_with_one_gpu() {
  NodeTopology node;
  Gpu gpu;
  gpu.bus_id = "0000:34:00.0";
  gpu.source = "hwloc";
  node.gpus.push_back(gpu);
  return node;
}

TEST(NvmlProbe, MissingLibraryIsOneUnknownAndNothingElse) {
  NodeTopology node = node_with_one_gpu();
  probe_nvml(node, "libcommbench-no-such-nvml.so.1");
  ASSERT_EQ(node.unknowns.size(), 1u);
  EXPECT_EQ(node.unknowns[0].rfind("NVLink, P2P and PCIe link state unknown: NVML not loadable "
                                   "(libcommbench-no-such-nvml.so.1: cannot open shared object file",
                                   0),
            0u)
      << node.unknowns[0];
  EXPECT_EQ(node.unknowns[0].back(), ')');
  ASSERT_EQ(node.gpus.size(), 1u);
  EXPECT_EQ(node.gpus[0].source, "hwloc");
  EXPECT_EQ(node.gpus[0].pcie_generation_current, 0);
  EXPECT_TRUE(node.nvlinks.empty());
  EXPECT_TRUE(node.p2p.empty());
  EXPECT_TRUE(node.sources.empty());
}

TEST(NvmlProbe, LibraryFromTheEnvironmentWhenNoneIsGiven) {
  const ScopedEnv env("COMMBENCH_NVML_LIBRARY", "libcommbench-env-nvml.so.1");
  NodeTopology node;
  probe_nvml(node);
  ASSERT_EQ(node.unknowns.size(), 1u);
  EXPECT_NE(node.unknowns[0].find("NVML not loadable (libcommbench-env-nvml.so.1: "), std::string::npos)
      << node.unknowns[0];
  EXPECT_TRUE(node.gpus.empty());
}

TEST(NvmlProbe, DefaultLibraryNameWhenNothingIsSet) {
  const ScopedEnv env("COMMBENCH_NVML_LIBRARY", "");
  NodeTopology node;
  probe_nvml(node);  // on a host with a driver this really probes: only "no throw" holds everywhere
  for (const auto& line : node.unknowns) EXPECT_FALSE(line.empty());
  if (!node.sources.empty()) {
    EXPECT_EQ(node.sources[0].rfind("NVML libnvidia-ml.so.1", 0), 0u) << node.sources[0];
  } else if (!node.unknowns.empty() && node.unknowns[0].find("not loadable") != std::string::npos) {
    EXPECT_NE(node.unknowns[0].find("(libnvidia-ml.so.1: "), std::string::npos) << node.unknowns[0];
  }
}

TEST(NvmlProbe, LibraryWithoutNvmlNamesTheMissingSymbol) {
  NodeTopology node = node_with_one_gpu();
  probe_nvml(node, "libm.so.6");
  ASSERT_EQ(node.unknowns.size(), 1u);
  EXPECT_EQ(node.unknowns[0],
            "NVLink, P2P and PCIe link state unknown: libm.so.6 has no nvmlInit_v2 (not NVML, or a driver too old)");
  ASSERT_EQ(node.gpus.size(), 1u);
  EXPECT_EQ(node.gpus[0].source, "hwloc");
  EXPECT_TRUE(node.sources.empty());
}

}  // namespace
}  // namespace commbench
