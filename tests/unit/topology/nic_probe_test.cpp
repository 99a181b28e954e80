#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

#include "commbench/config.hpp"
#include "commbench/core/error.hpp"
#include "commbench/topology/ibverbs_probe.hpp"
#include "commbench/topology/sysfs_nics.hpp"

namespace commbench {
namespace {

namespace fs = std::filesystem;

// ---- libibverbs: pure mappings, and what this machine (no RDMA devices) answers ----

TEST(IbverbsMapping, WidthCodesToLanes) {
  EXPECT_EQ(ib_width_lanes(1), 1);
  EXPECT_EQ(ib_width_lanes(2), 4);
  EXPECT_EQ(ib_width_lanes(4), 8);
  EXPECT_EQ(ib_width_lanes(8), 12);
  EXPECT_EQ(ib_width_lanes(16), 2);
  for (unsigned bad : {0u, 3u, 32u, 255u}) EXPECT_EQ(ib_width_lanes(bad), 0) << bad;
}

TEST(IbverbsMapping, SpeedCodesToLaneRates) {
  const std::pair<unsigned, IbSpeed> expected[] = {{1, {"SDR", 2.5}},    {2, {"DDR", 5.0}},      {4, {"QDR", 10.0}},
                                                   {8, {"FDR10", 10.0}}, {16, {"FDR", 14.0625}}, {32, {"EDR", 25.0}},
                                                   {64, {"HDR", 50.0}},  {128, {"NDR", 100.0}}};
  for (const auto& [code, speed] : expected) {
    EXPECT_EQ(ib_speed(code).name, speed.name) << code;
    EXPECT_DOUBLE_EQ(ib_speed(code).gbit_per_lane, speed.gbit_per_lane) << code;
    // The extended field repeats the legacy codes and wins over whatever the legacy says.
    EXPECT_EQ(ib_speed(0, code).name, speed.name) << code;
  }
  EXPECT_EQ(ib_speed(0).name, "");
  EXPECT_DOUBLE_EQ(ib_speed(3).gbit_per_lane, 0.0);
  // XDR only exists in the extended field.
  EXPECT_EQ(ib_speed(256).name, "");
  EXPECT_EQ(ib_speed(0, 256).name, "XDR");
  EXPECT_DOUBLE_EQ(ib_speed(128, 256).gbit_per_lane, 200.0);
  EXPECT_EQ(ib_speed(128, 512).name, "");
}

TEST(IbverbsMapping, StateNames) {
  EXPECT_EQ(ib_port_state_name(1), "DOWN");
  EXPECT_EQ(ib_port_state_name(2), "INIT");
  EXPECT_EQ(ib_port_state_name(3), "ARMED");
  EXPECT_EQ(ib_port_state_name(4), "ACTIVE");
  EXPECT_EQ(ib_port_state_name(5), "ACTIVE_DEFER");
  EXPECT_EQ(ib_port_state_name(0), "");
  EXPECT_EQ(ib_port_state_name(6), "");
  EXPECT_EQ(ib_phys_state_name(1), "Sleep");
  EXPECT_EQ(ib_phys_state_name(2), "Polling");
  EXPECT_EQ(ib_phys_state_name(3), "Disabled");
  EXPECT_EQ(ib_phys_state_name(4), "PortConfigurationTraining");
  EXPECT_EQ(ib_phys_state_name(5), "LinkUp");
  EXPECT_EQ(ib_phys_state_name(6), "LinkErrorRecovery");
  EXPECT_EQ(ib_phys_state_name(7), "Phy Test");
  EXPECT_EQ(ib_phys_state_name(8), "");
  EXPECT_EQ(ib_link_layer_name(1), "InfiniBand");
  EXPECT_EQ(ib_link_layer_name(2), "Ethernet");
  EXPECT_EQ(ib_link_layer_name(0), "");
  EXPECT_EQ(ib_link_layer_name(3), "");
}

struct LegacyPortAttr {
  unsigned char active_speed = 128;
};
struct ExtendedPortAttr {
  unsigned char active_speed = 0;
  unsigned active_speed_ex = 256;
};

TEST(IbverbsMapping, ExtendedSpeedOnlyWhereTheHeadersHaveIt) {
  EXPECT_EQ(ib_extended_speed(LegacyPortAttr{}), 0u);
  EXPECT_EQ(ib_extended_speed(ExtendedPortAttr{}), 256u);
}

TEST(IbverbsProbe, NoDevicesHereMeansFalseAndOneReason) {
  std::error_code ec;
  if (COMMBENCH_HAVE_IBVERBS && fs::exists("/sys/class/infiniband", ec) && !fs::is_empty("/sys/class/infiniband", ec))
    GTEST_SKIP() << "this machine has RDMA devices";
  NodeTopology node;
  EXPECT_FALSE(probe_ibverbs(node));
  ASSERT_EQ(node.unknowns.size(), 1u);
  EXPECT_EQ(node.unknowns[0], COMMBENCH_HAVE_IBVERBS ? "libibverbs: no RDMA devices" : "libibverbs: not in this build");
  EXPECT_TRUE(node.nics.empty());
  EXPECT_TRUE(node.sources.empty());
}

// ---- sysfs: a tree shaped like /sys, built per test ----

class SysfsNicTree : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    root_ = fs::temp_directory_path() /
            ("commbench-sysfs-nics-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  static void write(const fs::path& file, const std::string& text) {
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text << "\n";
  }
  void port(const std::string& device, int number, const std::string& rate, const std::string& state,
            const std::string& phys, const std::string& layer) {
    const fs::path dir = root_ / "class/infiniband" / device / "ports" / std::to_string(number);
    write(dir / "rate", rate);
    write(dir / "state", state);
    write(dir / "phys_state", phys);
    write(dir / "link_layer", layer);
  }
  // `device` as the kernel makes it: a relative link; the target exists only when asked.
  void device_link(const fs::path& owner, const std::string& target) {
    fs::create_directories(owner);
    fs::create_directory_symlink(target, owner / "device");
  }
  fs::path pci(const std::string& bus_id) { return root_ / bus_id; }
  void interface(const std::string& name, const std::string& speed, const std::string& operstate) {
    const fs::path dir = root_ / "class/net" / name;
    fs::create_directories(dir);
    if (!speed.empty()) write(dir / "speed", speed);
    if (!operstate.empty()) write(dir / "operstate", operstate);
  }

  void build_cluster_node() {
    // mlx5_0: active 4X NDR, PCI 0000:19:00.0 on NUMA 0 with netdev ibp25s0.
    port("mlx5_0", 1, "400 Gb/sec (4X NDR)", "4: ACTIVE", "5: LinkUp", "InfiniBand");
    device_link(root_ / "class/infiniband/mlx5_0", "../../../0000:19:00.0");
    write(pci("0000:19:00.0") / "numa_node", "0");
    fs::create_directories(pci("0000:19:00.0") / "net/ibp25s0");
    // mlx5_1: trained down to 2 lanes; a plain `device` directory carries no bus id.
    port("mlx5_1", 1, "200 Gb/sec (2X NDR)", "4: ACTIVE", "5: LinkUp", "InfiniBand");
    write(root_ / "class/infiniband/mlx5_1/device/numa_node", "1");
    // mlx5_2: down, its link dangling (as checked into git): bus id still known.
    port("mlx5_2", 1, "400 Gb/sec (4X NDR)", "1: DOWN", "3: Disabled", "InfiniBand");
    device_link(root_ / "class/infiniband/mlx5_2", "../../../0000:2a:00.0");
    // mlx5_3: RoCE, NUMA "-1", netdev ens3f0np0 (also under class/net: not a second NIC).
    port("mlx5_3", 1, "100 Gb/sec (4X EDR)", "4: ACTIVE", "5: LinkUp", "Ethernet");
    device_link(root_ / "class/infiniband/mlx5_3", "../../../0000:3b:00.0");
    write(pci("0000:3b:00.0") / "numa_node", "-1");
    fs::create_directories(pci("0000:3b:00.0") / "net/ens3f0np0");
    interface("ens3f0np0", "100000", "up");
    device_link(root_ / "class/net/ens3f0np0", "../../../0000:3b:00.0");
    interface("ibp25s0", "400000", "up");
    device_link(root_ / "class/net/ibp25s0", "../../../0000:19:00.0");
    // eth0: plain Ethernet, 25 Gb/s, up.
    interface("eth0", "25000", "up");
    device_link(root_ / "class/net/eth0", "../../../0000:5e:00.0");
    // virt0: virtio hangs below its PCI function; speed unknown; down.
    fs::create_directories(root_ / "devices/pci0000:00/0000:00:03.0/virtio2");
    interface("virt0", "-1", "down");
    device_link(root_ / "class/net/virt0", "../../../devices/pci0000:00/0000:00:03.0/virtio2");
    // lo: no device, not a NIC.
    interface("lo", "", "unknown");
  }

  fs::path root_;
};

TEST_F(SysfsNicTree, RdmaDevicesAndEthernetInterfaces) {
  build_cluster_node();
  const std::vector<Nic> nics = read_sysfs_nics(root_.string());
  ASSERT_EQ(nics.size(), 6u);
  std::vector<std::string> names;
  for (const Nic& nic : nics) names.push_back(nic.name);
  EXPECT_EQ(names, (std::vector<std::string>{"eth0", "mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "virt0"}));
  for (const Nic& nic : nics) EXPECT_EQ(nic.source, "sysfs") << nic.name;

  const Nic& eth0 = nics[0];
  EXPECT_EQ(eth0.bus_id, "0000:5e:00.0");
  EXPECT_EQ(eth0.numa, -1);  // dangling link: nothing to read through it
  EXPECT_FALSE(eth0.rdma);   // listed, but not in the matrix
  EXPECT_TRUE(nics[1].rdma);
  EXPECT_EQ(eth0.netdevs, std::vector<std::string>{"eth0"});
  ASSERT_EQ(eth0.ports.size(), 1u);
  EXPECT_EQ(eth0.ports[0].port, 1);
  EXPECT_DOUBLE_EQ(eth0.ports[0].rate_gbit, 25.0);
  EXPECT_DOUBLE_EQ(eth0.ports[0].bandwidth_gbps(), 3.125);
  EXPECT_EQ(eth0.ports[0].state_code, 4);
  EXPECT_EQ(eth0.ports[0].state, "ACTIVE");
  EXPECT_EQ(eth0.ports[0].physical_state, "LinkUp");
  EXPECT_EQ(eth0.ports[0].link_layer, "Ethernet");
  EXPECT_EQ(eth0.ports[0].lanes, 0);
  EXPECT_EQ(eth0.ports[0].speed, "");

  const Nic& ndr = nics[1];
  EXPECT_EQ(ndr.bus_id, "0000:19:00.0");
  EXPECT_EQ(ndr.numa, 0);
  EXPECT_EQ(ndr.netdevs, std::vector<std::string>{"ibp25s0"});
  ASSERT_EQ(ndr.ports.size(), 1u);
  EXPECT_TRUE(ndr.ports[0].active());
  EXPECT_EQ(ndr.ports[0].state, "ACTIVE");
  EXPECT_EQ(ndr.ports[0].physical_state, "LinkUp");
  EXPECT_EQ(ndr.ports[0].link_layer, "InfiniBand");
  EXPECT_DOUBLE_EQ(ndr.ports[0].rate_gbit, 400.0);
  EXPECT_DOUBLE_EQ(ndr.ports[0].bandwidth_gbps(), 50.0);
  EXPECT_EQ(ndr.ports[0].lanes, 4);
  EXPECT_EQ(ndr.ports[0].speed, "NDR");

  const Nic& degraded = nics[2];
  EXPECT_EQ(degraded.bus_id, "");
  EXPECT_EQ(degraded.numa, 1);
  EXPECT_TRUE(degraded.netdevs.empty());
  ASSERT_EQ(degraded.ports.size(), 1u);
  EXPECT_EQ(degraded.ports[0].lanes, 2);
  EXPECT_DOUBLE_EQ(degraded.ports[0].bandwidth_gbps(), 25.0);

  const Nic& down = nics[3];
  EXPECT_EQ(down.bus_id, "0000:2a:00.0");
  EXPECT_EQ(down.numa, -1);
  ASSERT_EQ(down.ports.size(), 1u);
  EXPECT_FALSE(down.ports[0].active());
  EXPECT_EQ(down.ports[0].state_code, 1);
  EXPECT_EQ(down.ports[0].state, "DOWN");
  EXPECT_EQ(down.ports[0].physical_state, "Disabled");

  const Nic& roce = nics[4];
  EXPECT_EQ(roce.bus_id, "0000:3b:00.0");
  EXPECT_EQ(roce.numa, -1);
  EXPECT_EQ(roce.netdevs, std::vector<std::string>{"ens3f0np0"});
  ASSERT_EQ(roce.ports.size(), 1u);
  EXPECT_EQ(roce.ports[0].link_layer, "Ethernet");
  EXPECT_EQ(roce.ports[0].speed, "EDR");
  EXPECT_DOUBLE_EQ(roce.ports[0].rate_gbit, 100.0);

  const Nic& virt = nics[5];
  EXPECT_EQ(virt.bus_id, "0000:00:03.0");
  ASSERT_EQ(virt.ports.size(), 1u);
  EXPECT_DOUBLE_EQ(virt.ports[0].rate_gbit, 0.0);
  EXPECT_EQ(virt.ports[0].state_code, 1);
  EXPECT_EQ(virt.ports[0].state, "DOWN");
  EXPECT_EQ(virt.ports[0].physical_state, "");
}

TEST_F(SysfsNicTree, MissingTreeMeansNoNics) {
  EXPECT_TRUE(read_sysfs_nics((root_ / "nothing").string()).empty());
  EXPECT_TRUE(read_sysfs_nics(root_.string()).empty());
}

TEST_F(SysfsNicTree, AbsentSpeedAndOperstateMeanUnknownAndDown) {
  interface("eth9", "", "");
  device_link(root_ / "class/net/eth9", "../../../0000:77:00.0");
  const auto nics = read_sysfs_nics(root_.string());
  ASSERT_EQ(nics.size(), 1u);
  ASSERT_EQ(nics[0].ports.size(), 1u);
  EXPECT_DOUBLE_EQ(nics[0].ports[0].rate_gbit, 0.0);
  EXPECT_EQ(nics[0].ports[0].state_code, 1);
  EXPECT_EQ(nics[0].ports[0].state, "DOWN");
}

TEST_F(SysfsNicTree, GarbageSpeedNamesTheFile) {
  interface("eth1", "fast", "up");
  device_link(root_ / "class/net/eth1", "../../../0000:5e:00.1");
  try {
    read_sysfs_nics(root_.string());
    FAIL() << "accepted speed 'fast'";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              (root_ / "class/net/eth1/speed").string() + ": 'fast' is not a link speed (expected Mb/s, e.g. '25000')");
  }
}

TEST_F(SysfsNicTree, GarbageOperstateNumaAndPortNameTheFile) {
  interface("eth1", "25000", "sideways");
  device_link(root_ / "class/net/eth1", "../../../0000:5e:00.1");
  try {
    read_sysfs_nics(root_.string());
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), (root_ / "class/net/eth1/operstate").string() +
                                         ": 'sideways' is not an operstate (expected e.g. 'up' or 'down')");
  }
  fs::remove_all(root_ / "class/net");

  write(root_ / "class/infiniband/mlx5_0/device/numa_node", "zero");
  try {
    read_sysfs_nics(root_.string());
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), (root_ / "class/infiniband/mlx5_0/device/numa_node").string() +
                                         ": 'zero' is not a NUMA node (expected e.g. '0' or '-1')");
  }
  write(root_ / "class/infiniband/mlx5_0/device/numa_node", "0");

  port("mlx5_0", 1, "lots Gb/sec", "4: ACTIVE", "5: LinkUp", "InfiniBand");
  EXPECT_THROW(read_sysfs_nics(root_.string()), UsageError);
}

TEST(SysfsNicLive, ThisMachineReadsWithoutThrowing) {
  std::vector<Nic> nics;
  EXPECT_NO_THROW(nics = read_sysfs_nics("/sys"));
  for (const Nic& nic : nics) {
    EXPECT_FALSE(nic.name.empty());
    EXPECT_EQ(nic.source, "sysfs");
  }
}

// ---- merging into the node ----

Nic nic_named(const std::string& name, const std::string& source) {
  Nic nic;
  nic.name = name;
  nic.source = source;
  return nic;
}

TEST(SysfsNicMerge, PortsReadFromTheDeviceReplaceTheDumpsAssumedOnes) {
  NodeTopology node;
  Nic from_dump = nic_named("mlx5_3", "nccl-topo-xml");
  NicPort assumed;  // NCCL's dump lists usable ports only, so they are taken as active
  assumed.state_code = 4;
  assumed.state = "ACTIVE";
  assumed.rate_gbit = 400;
  from_dump.ports = {assumed};
  node.nics.push_back(from_dump);
  Nic from_sysfs = nic_named("mlx5_3", "sysfs");
  NicPort down;
  down.state_code = 1;
  down.state = "DOWN";
  from_sysfs.ports = {down};
  merge_nics(node, {from_sysfs});
  ASSERT_EQ(node.nics[0].ports.size(), 1u);
  EXPECT_EQ(node.nics[0].ports[0].state, "DOWN");
}

TEST(SysfsNicMerge, FillsWhatIsUnknownAndKeepsFirstPorts) {
  NodeTopology node;
  Nic from_ibverbs = nic_named("mlx5_0", "ibverbs");
  NicPort live;
  live.state_code = 4;
  live.rate_gbit = 400;
  from_ibverbs.ports = {live};
  node.nics.push_back(from_ibverbs);
  Nic from_hwloc = nic_named("mlx5_1", "hwloc");
  from_hwloc.bus_id = "0000:2a:00.0";
  from_hwloc.pci = 7;
  from_hwloc.numa = 1;
  from_hwloc.netdevs = {"ibp42s0"};
  node.nics.push_back(from_hwloc);

  Nic sysfs0 = nic_named("mlx5_0", "sysfs");
  sysfs0.bus_id = "0000:19:00.0";
  sysfs0.numa = 0;
  sysfs0.netdevs = {"ibp25s0"};
  NicPort stale;
  stale.state_code = 1;
  sysfs0.ports = {stale};
  Nic sysfs1 = nic_named("mlx5_1", "sysfs");
  sysfs1.bus_id = "0000:ff:00.0";
  sysfs1.numa = 0;
  sysfs1.netdevs = {"ibp42s0", "ibp42s0d1"};
  sysfs1.ports = {stale};
  Nic sysfs2 = nic_named("eth0", "sysfs");
  merge_nics(node, {sysfs0, sysfs1, sysfs2});

  ASSERT_EQ(node.nics.size(), 3u);
  const Nic& a = node.nics[0];
  EXPECT_EQ(a.source, "ibverbs");
  EXPECT_EQ(a.bus_id, "0000:19:00.0");
  EXPECT_EQ(a.numa, 0);
  EXPECT_EQ(a.netdevs, std::vector<std::string>{"ibp25s0"});
  ASSERT_EQ(a.ports.size(), 1u);
  EXPECT_EQ(a.ports[0].state_code, 4);  // ports already there win

  const Nic& b = node.nics[1];
  EXPECT_EQ(b.source, "hwloc");
  EXPECT_EQ(b.bus_id, "0000:2a:00.0");  // known values are kept
  EXPECT_EQ(b.pci, 7);
  EXPECT_EQ(b.numa, 1);
  EXPECT_EQ(b.netdevs, (std::vector<std::string>{"ibp42s0", "ibp42s0d1"}));
  ASSERT_EQ(b.ports.size(), 1u);  // none before: taken
  EXPECT_EQ(b.ports[0].state_code, 1);

  EXPECT_EQ(node.nics[2].name, "eth0");
  EXPECT_EQ(node.nics[2].source, "sysfs");
}

}  // namespace
}  // namespace commbench
