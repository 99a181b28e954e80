#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>

#include "commbench/core/error.hpp"
#include "commbench/topology/link_spec.hpp"
#include "commbench/topology/sysfs_ports.hpp"

namespace commbench {
namespace {

namespace fs = std::filesystem;

TEST(LinkSpec, PcieAfterEncoding) {
  EXPECT_DOUBLE_EQ(*pcie_bandwidth_gbps(3, 16), 15.75);
  EXPECT_DOUBLE_EQ(*pcie_bandwidth_gbps(4, 16), 31.5);
  EXPECT_DOUBLE_EQ(*pcie_bandwidth_gbps(5, 16), 63.0);
  EXPECT_DOUBLE_EQ(*pcie_bandwidth_gbps(6, 16), 121.0);
  EXPECT_DOUBLE_EQ(*pcie_bandwidth_gbps(4, 8), 15.75);  // a GPU trained down to Gen4 x8
  EXPECT_DOUBLE_EQ(*pcie_bandwidth_gbps(1, 1), 0.25);
  EXPECT_FALSE(pcie_bandwidth_gbps(7, 16));
  EXPECT_FALSE(pcie_bandwidth_gbps(4, 3));
}

TEST(LinkSpec, NvlinkAndInfiniband) {
  EXPECT_DOUBLE_EQ(*nvlink_link_bandwidth_gbps(4), 25.0);
  EXPECT_DOUBLE_EQ(18 * *nvlink_link_bandwidth_gbps(4), 450.0);  // H100: 18 links
  EXPECT_DOUBLE_EQ(*nvlink_link_bandwidth_gbps(5), 50.0);
  EXPECT_FALSE(nvlink_link_bandwidth_gbps(6));
  EXPECT_DOUBLE_EQ(*infiniband_bandwidth_gbps("EDR", 4), 12.5);
  EXPECT_DOUBLE_EQ(*infiniband_bandwidth_gbps("HDR", 4), 25.0);
  EXPECT_DOUBLE_EQ(*infiniband_bandwidth_gbps("NDR", 4), 50.0);
  EXPECT_DOUBLE_EQ(*infiniband_bandwidth_gbps("XDR", 4), 100.0);
  EXPECT_DOUBLE_EQ(*infiniband_bandwidth_gbps("HDR", 2), 12.5);
  EXPECT_FALSE(infiniband_bandwidth_gbps("GDR", 4));
}

TEST(SysfsRate, KernelFormats) {
  const PortRate hdr = parse_port_rate("200 Gb/sec (4X HDR)\n", "rate");
  EXPECT_DOUBLE_EQ(hdr.gbit, 200.0);
  EXPECT_EQ(hdr.lanes, 4);
  EXPECT_EQ(hdr.speed, "HDR");
  EXPECT_DOUBLE_EQ(parse_port_rate("2.5 Gb/sec (1X SDR)", "rate").gbit, 2.5);
  EXPECT_EQ(parse_port_rate("56 Gb/sec (4X FDR)", "rate").speed, "FDR");
  const PortRate ethernet = parse_port_rate("25 Gb/sec", "rate");
  EXPECT_EQ(ethernet.lanes, 0);
  EXPECT_TRUE(ethernet.speed.empty());
}

TEST(SysfsRate, GarbageNamesTheFile) {
  for (const char* bad : {"", "fast", "200 Gb/s (4X HDR)", "-200 Gb/sec", "0 Gb/sec", "200 Gb/sec (0X HDR)",
                          "200 Gb/sec (4X hdr)", "1e9 Gb/sec", "200 Gb/sec (4X HDR) extra"}) {
    try {
      parse_port_rate(bad, "/sys/class/infiniband/mlx5_0/ports/1/rate");
      FAIL() << "accepted '" << bad << "'";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("/sys/class/infiniband/mlx5_0/ports/1/rate: '", 0), 0u) << e.what();
    }
  }
}

TEST(SysfsState, CodeAndName) {
  const PortState active = parse_port_state("4: ACTIVE\n", "state");
  EXPECT_EQ(active.code, 4);
  EXPECT_EQ(active.name, "ACTIVE");
  EXPECT_EQ(parse_port_state("5: LinkUp", "phys_state").name, "LinkUp");
  EXPECT_EQ(parse_port_state("1: DOWN", "state").code, 1);
  // What kernels really print, spaces and brackets included.
  EXPECT_EQ(parse_port_state("7: Phy Test", "phys_state").name, "Phy Test");
  EXPECT_EQ(parse_port_state("0: <unknown>", "phys_state").code, 0);
  for (const char* bad : {"ACTIVE", "4 ACTIVE", "x: ACTIVE", "4:", "400: ACTIVE", "4: ACT\x01IVE"})
    EXPECT_THROW(parse_port_state(bad, "state"), UsageError) << bad;
}

class SysfsTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("commbench-sysfs-" + std::to_string(::getpid()));
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void port(const std::string& device, int port, const std::string& rate, const std::string& state,
            const std::string& phys, const std::string& layer) {
    const fs::path dir = root_ / "class" / "infiniband" / device / "ports" / std::to_string(port);
    fs::create_directories(dir);
    std::ofstream(dir / "rate") << rate << "\n";
    std::ofstream(dir / "state") << state << "\n";
    std::ofstream(dir / "phys_state") << phys << "\n";
    std::ofstream(dir / "link_layer") << layer << "\n";
  }
  fs::path root_;
};

TEST_F(SysfsTree, ActiveDegradedAndDownPorts) {
  port("mlx5_1", 1, "400 Gb/sec (4X NDR)", "4: ACTIVE", "5: LinkUp", "InfiniBand");
  port("mlx5_0", 1, "200 Gb/sec (2X NDR)", "4: ACTIVE", "5: LinkUp", "InfiniBand");  // half its lanes
  port("mlx5_2", 1, "400 Gb/sec (4X NDR)", "1: DOWN", "3: Disabled", "InfiniBand");
  port("mlx5_bond_0", 1, "100 Gb/sec (4X EDR)", "4: ACTIVE", "5: LinkUp", "Ethernet");
  const auto ports = read_sysfs_ports(root_.string());
  ASSERT_EQ(ports.size(), 4u);
  EXPECT_EQ(ports[0].device, "mlx5_0");
  EXPECT_DOUBLE_EQ(ports[0].bandwidth_gbps, 25.0);
  EXPECT_EQ(ports[0].rate.lanes, 2);
  EXPECT_DOUBLE_EQ(ports[1].bandwidth_gbps, 50.0);
  EXPECT_TRUE(ports[1].active());
  EXPECT_FALSE(ports[2].active());
  EXPECT_EQ(ports[2].physical_state.name, "Disabled");
  EXPECT_EQ(ports[3].link_layer, "Ethernet");
}

TEST_F(SysfsTree, WhatKernelsReallyWriteIsAccepted) {
  port("mlx5_0", 1, "400 Gb/sec (4X NDR)", "1: DOWN", "7: Phy Test", "Unknown");
  const fs::path dir = root_ / "class" / "infiniband" / "mlx5_0" / "ports" / "1";
  fs::remove(dir / "rate");  // a port whose rate the driver will not read: unknown, not an error
  const std::vector<SysfsPort> ports = read_sysfs_ports(root_.string());
  ASSERT_EQ(ports.size(), 1u);
  EXPECT_EQ(ports[0].physical_state.name, "Phy Test");
  EXPECT_EQ(ports[0].link_layer, "Unknown");
  EXPECT_DOUBLE_EQ(ports[0].rate.gbit, 0.0);
}

TEST_F(SysfsTree, AnAttributeThatIsADirectoryNamesIt) {
  port("mlx5_0", 1, "400 Gb/sec (4X NDR)", "4: ACTIVE", "5: LinkUp", "InfiniBand");
  const fs::path state = root_ / "class" / "infiniband" / "mlx5_0" / "ports" / "1" / "state";
  fs::remove(state);
  fs::create_directory(state);
  try {
    read_sysfs_ports(root_.string());
    FAIL() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), state.string() + ": cannot read (Is a directory)");
  }
}

TEST_F(SysfsTree, MissingTreeMeansNoPortsAndGarbageNamesTheFile) {
  EXPECT_TRUE(read_sysfs_ports(root_.string()).empty());
  port("mlx5_0", 1, "lots Gb/sec", "4: ACTIVE", "5: LinkUp", "InfiniBand");
  try {
    read_sysfs_ports(root_.string());
    FAIL();
  } catch (const UsageError& e) {
    const std::string expected = (root_ / "class/infiniband/mlx5_0/ports/1/rate").string() + ": 'lots Gb/sec'";
    EXPECT_EQ(std::string(e.what()).rfind(expected, 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace commbench
