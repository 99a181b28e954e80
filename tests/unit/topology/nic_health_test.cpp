#include "commbench/topology/nic_health.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "temp_dir.hpp"

namespace commbench {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

constexpr const char* kProcNetDevHeader =
    "Inter-|   Receive                                                |  Transmit\n"
    " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls "
    "carrier compressed\n";

// A /sys tree of InfiniBand ports whose counters, state and rate the test steps, and a
// /proc/net/dev beside it.
struct HealthTree {
  TempDir dir;
  std::string port_file(const std::string& device, int port, const std::string& name) const {
    const std::string file = "class/infiniband/" + device + "/ports/" + std::to_string(port) + "/" + name;
    fs::create_directories((dir.root() / file).parent_path());
    return file;
  }
  void counter(const std::string& device, int port, const std::string& name, const std::string& value) const {
    dir.write(port_file(device, port, "counters/" + name), value + "\n");
  }
  void port(const std::string& device, int port, const std::string& state, const std::string& rate) const {
    dir.write(port_file(device, port, "state"), state + "\n");
    dir.write(port_file(device, port, "rate"), rate + "\n");
    dir.write(port_file(device, port, "counters/port_xmit_data"), "0\n");
  }
  // "eth0: rx_bytes rx_packets rx_errs rx_drop ... tx_bytes tx_packets tx_errs tx_drop ..."
  void interface(const std::string& name, int rx_errs, int rx_drop, int tx_errs, int tx_drop, int carrier) const {
    dir.write("net_dev", std::string(kProcNetDevHeader) + "    lo: 1 1 9 9 0 0 0 0 1 1 9 9 0 0 0 0\n  " + name +
                             ": 500 10 " + std::to_string(rx_errs) + " " + std::to_string(rx_drop) +
                             " 0 0 0 0 600 12 " + std::to_string(tx_errs) + " " + std::to_string(tx_drop) + " 0 0 " +
                             std::to_string(carrier) + " 0\n");
  }
  NicHealthSnapshot read() const { return read_nic_health({dir.root().string(), dir.path("net_dev")}); }
};

TEST(NicHealth, ReadsErrorCountersStateAndRateOfPortsAndInterfaces) {
  HealthTree tree;
  tree.port("mlx5_0", 1, "4: ACTIVE", "400 Gb/sec (4X NDR)");
  tree.counter("mlx5_0", 1, "symbol_error", "3");
  tree.counter("mlx5_0", 1, "link_downed", "garbage");  // unreadable: left out
  tree.interface("eth0", 1, 2, 3, 4, 5);
  const NicHealthSnapshot snapshot = tree.read();
  ASSERT_EQ(snapshot.nics.size(), 2u);  // no loopback
  EXPECT_EQ(snapshot.nics[0].label, "eth0");
  EXPECT_EQ(snapshot.nics[0].counters,
            (std::map<std::string, std::uint64_t>{
                {"rx_errors", 1}, {"rx_dropped", 2}, {"tx_errors", 3}, {"tx_dropped", 4}, {"tx_carrier_errors", 5}}));
  EXPECT_EQ(snapshot.nics[1].label, "mlx5_0:1");
  EXPECT_EQ(snapshot.nics[1].counters, (std::map<std::string, std::uint64_t>{{"symbol_error", 3}}));
  EXPECT_EQ(snapshot.nics[1].state, "ACTIVE");
  EXPECT_EQ(snapshot.nics[1].rate, "400 Gb/sec (4X NDR)");
}

TEST(NicHealth, SaysWhatSteppedDuringAnInterval) {
  HealthTree tree;
  tree.port("mlx5_0", 1, "4: ACTIVE", "400 Gb/sec (4X NDR)");
  tree.counter("mlx5_0", 1, "symbol_error", "3");
  tree.counter("mlx5_0", 1, "link_downed", "0");
  tree.counter("mlx5_0", 1, "port_rcv_errors", "10");
  tree.interface("eth0", 0, 0, 0, 0, 0);
  const NicHealthSnapshot before = tree.read();
  EXPECT_TRUE(nic_health_changes(before, tree.read()).empty());

  tree.counter("mlx5_0", 1, "symbol_error", "15");
  tree.counter("mlx5_0", 1, "link_downed", "1");
  tree.counter("mlx5_0", 1, "port_rcv_errors", "2");  // went back: cleared by someone
  tree.port("mlx5_0", 1, "1: DOWN", "200 Gb/sec (2X NDR)");
  tree.interface("eth0", 0, 3, 0, 0, 1);
  EXPECT_EQ(nic_health_changes(before, tree.read()),
            (std::vector<std::string>{"eth0 rx_dropped +3", "eth0 tx_carrier_errors +1", "mlx5_0:1 link_downed +1",
                                      "mlx5_0:1 port_rcv_errors reset", "mlx5_0:1 symbol_error +12",
                                      "mlx5_0:1 state ACTIVE -> DOWN",
                                      "mlx5_0:1 rate 400 Gb/sec (4X NDR) -> 200 Gb/sec (2X NDR)"}));
}

TEST(NicHealth, APortThatAppearsOrDisappearsIsSaid) {
  HealthTree tree;
  tree.port("mlx5_0", 1, "4: ACTIVE", "400 Gb/sec (4X NDR)");
  const NicHealthSnapshot before = tree.read();
  fs::remove_all(tree.dir.root() / "class/infiniband/mlx5_0");
  tree.port("mlx5_1", 1, "4: ACTIVE", "400 Gb/sec (4X NDR)");
  EXPECT_EQ(nic_health_changes(before, tree.read()),
            (std::vector<std::string>{"mlx5_1:1 appeared", "mlx5_0:1 disappeared"}));
}

TEST(NicHealth, NothingToReadIsNoError) {
  EXPECT_TRUE(read_nic_health({"/nonexistent-sysfs", "/nonexistent/net/dev"}).nics.empty());
}

}  // namespace
}  // namespace commbench
