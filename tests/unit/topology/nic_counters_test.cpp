#include "commbench/topology/nic_counters.hpp"
#include "commbench/topology/nic_rails.hpp"
#include "commbench/topology/nic_sampler.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <thread>
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

// A /sys tree with InfiniBand ports, and a /proc/net/dev beside it.
struct CounterTree {
  TempDir dir;
  void port(const std::string& device, int port, const std::string& xmit, const std::string& rcv) const {
    const fs::path counters = dir.root() / "class/infiniband" / device / "ports" / std::to_string(port) / "counters";
    fs::create_directories(counters);
    if (!xmit.empty()) dir.write((counters / "port_xmit_data").lexically_relative(dir.root()).string(), xmit + "\n");
    if (!rcv.empty()) dir.write((counters / "port_rcv_data").lexically_relative(dir.root()).string(), rcv + "\n");
  }
  void interfaces(const std::string& lines) const { dir.write("net_dev", std::string(kProcNetDevHeader) + lines); }
  NicCounterSnapshot read() const { return read_nic_counters({dir.root().string(), dir.path("net_dev")}); }
};

std::string interface_line(const std::string& name, unsigned long long rx, unsigned long long tx) {
  return name + ": " + std::to_string(rx) + " 10 0 0 0 0 0 0 " + std::to_string(tx) + " 12 0 0 0 0 0 0\n";
}

TEST(NicCounters, InfinibandPortsCountInFourByteWordsAndInterfacesInBytes) {
  CounterTree tree;
  tree.port("mlx5_1", 1, "250", "1000");
  tree.port("mlx5_0", 1, "100", "200");
  tree.interfaces(interface_line("lo", 999, 999) + interface_line("eth1", 7, 8) +
                  "  eth0: 5000 1 0 0 0 0 0 0 6000 2 0 0 0 0 0 0\n");
  const NicCounterSnapshot snapshot = tree.read();
  ASSERT_EQ(snapshot.nics.size(), 4u);  // no loopback
  EXPECT_EQ(snapshot.nics[0].device, "mlx5_0");
  EXPECT_EQ(snapshot.nics[0].port, 1);
  EXPECT_TRUE(snapshot.nics[0].rdma);
  EXPECT_EQ(snapshot.nics[0].tx_bytes, 400u);
  EXPECT_EQ(snapshot.nics[0].rx_bytes, 800u);
  EXPECT_EQ(snapshot.nics[1].tx_bytes, 1000u);
  EXPECT_EQ(snapshot.nics[2].device, "eth0");
  EXPECT_FALSE(snapshot.nics[2].rdma);
  EXPECT_EQ(snapshot.nics[2].rx_bytes, 5000u);
  EXPECT_EQ(snapshot.nics[2].tx_bytes, 6000u);
  EXPECT_EQ(snapshot.nics[3].device, "eth1");
  EXPECT_EQ(snapshot.nics[3].tx_bytes, 8u);
}

TEST(NicCounters, AMissingOrGarbledCounterIsSaidNotThrown) {
  CounterTree tree;
  tree.port("mlx5_0", 1, "", "200");
  tree.port("mlx5_1", 1, "lots", "200");
  tree.interfaces("  eth0: 5000 1 0\n");
  const NicCounterSnapshot snapshot = tree.read();
  ASSERT_EQ(snapshot.nics.size(), 3u);
  EXPECT_FALSE(snapshot.nics[0].tx_bytes.has_value());
  EXPECT_EQ(snapshot.nics[0].rx_bytes, 800u);
  EXPECT_NE(snapshot.nics[0].problem.find("port_xmit_data: missing"), std::string::npos) << snapshot.nics[0].problem;
  EXPECT_NE(snapshot.nics[1].problem.find("'lots' is no counter"), std::string::npos) << snapshot.nics[1].problem;
  EXPECT_FALSE(snapshot.nics[2].tx_bytes.has_value());
  EXPECT_NE(snapshot.nics[2].problem.find("not one of byte counters"), std::string::npos);
}

TEST(NicCounters, NoTreeAtAllMeansNoNics) {
  TempDir dir;
  EXPECT_TRUE(read_nic_counters({dir.path("none"), dir.path("none/net_dev")}).nics.empty());
}

TEST(NicTraffic, ChangesBetweenSnapshots) {
  CounterTree tree;
  tree.port("mlx5_0", 1, "100", "200");
  tree.interfaces(interface_line("eth0", 5000, 6000));
  const NicCounterSnapshot before = tree.read();
  tree.port("mlx5_0", 1, "1100", "1200");
  tree.interfaces(interface_line("eth0", 5500, 9000));
  const auto traffic = nic_traffic(before, tree.read());
  ASSERT_EQ(traffic.size(), 2u);
  EXPECT_EQ(traffic[0].tx_bytes, 4000u);
  EXPECT_EQ(traffic[0].rx_bytes, 4000u);
  EXPECT_EQ(traffic[0].bytes(), 8000u);
  EXPECT_TRUE(traffic[0].note.empty()) << traffic[0].note;
  EXPECT_EQ(traffic[1].device, "eth0");
  EXPECT_EQ(traffic[1].rx_bytes, 500u);
  EXPECT_EQ(traffic[1].tx_bytes, 3000u);
}

TEST(NicTraffic, WrapStopResetAppearAndDisappear) {
  CounterTree tree;
  tree.port("mlx5_0", 1, "4294967000", "10");  // 32-bit words, near the top
  tree.port("mlx5_1", 1, "10", "10");
  tree.interfaces(interface_line("eth0", 4294967200ull, 5) + interface_line("eth1", 1ull << 40, 5));
  const NicCounterSnapshot before = tree.read();
  fs::remove_all(tree.dir.root() / "class/infiniband/mlx5_1");
  tree.port("mlx5_0", 1, "4294967295", "20");
  tree.port("mlx5_2", 1, "10", "10");
  tree.interfaces(interface_line("eth0", 100, 5) + interface_line("eth1", 7, 5));
  const auto traffic = nic_traffic(before, tree.read());
  ASSERT_EQ(traffic.size(), 5u);
  // InfiniBand's 32-bit counters stop at their maximum: what was sent cannot be told.
  EXPECT_EQ(traffic[0].device, "mlx5_0");
  EXPECT_FALSE(traffic[0].tx_bytes.has_value());
  EXPECT_EQ(traffic[0].rx_bytes, 40u);
  EXPECT_NE(traffic[0].note.find("stopped at its maximum"), std::string::npos) << traffic[0].note;
  EXPECT_EQ(traffic[1].device, "mlx5_2");
  EXPECT_EQ(traffic[1].note, "appeared during the case");
  EXPECT_FALSE(traffic[1].known());
  // A 32-bit netdev counter wraps: 4294967200 -> 2^32 + 100.
  EXPECT_EQ(traffic[2].device, "eth0");
  EXPECT_EQ(traffic[2].rx_bytes, 196u);
  EXPECT_EQ(traffic[2].note, "its 32-bit counter wrapped");
  // A 64-bit counter that went back was reset: unknown, not a wrap.
  EXPECT_EQ(traffic[3].device, "eth1");
  EXPECT_FALSE(traffic[3].rx_bytes.has_value());
  EXPECT_EQ(traffic[3].tx_bytes, 0u);
  EXPECT_EQ(traffic[3].note, "its counter went back (reset during the case)");
  EXPECT_EQ(traffic[4].device, "mlx5_1");
  EXPECT_EQ(traffic[4].note, "disappeared during the case");
}

TEST(NicTraffic, CounterChangeAlone) {
  std::string note;
  EXPECT_EQ(counter_change(10, 30, false, note), 20u);
  EXPECT_TRUE(note.empty());
  EXPECT_EQ(counter_change(0xFFFFFFF0ull, 0x10ull, false, note), 0x20u);
  EXPECT_EQ(note, "its 32-bit counter wrapped");
  note.clear();
  // RDMA counters never wrap: a 32-bit one stops, a 64-bit one does not come round.
  EXPECT_FALSE(counter_change(0xFFFFFFF0ull, 0x10ull, true, note).has_value());
  EXPECT_EQ(note, "its counter went back (reset during the case)");
}

}  // namespace
}  // namespace commbench

namespace commbench {
namespace {

TEST(NicSampler, CarriesTheCaseTotalsAndABusiestIntervalOfAtLeastTheMeanRate) {
  CounterTree tree;
  tree.port("mlx5_0", 1, "0", "0");
  tree.interfaces(interface_line("eth0", 0, 0));
  NicSampler sampler({tree.dir.root().string(), tree.dir.path("net_dev")}, std::chrono::milliseconds(10));
  sampler.start();
  tree.port("mlx5_0", 1, "250000", "500000");
  tree.interfaces(interface_line("eth0", 0, 0));
  std::this_thread::sleep_for(std::chrono::milliseconds(60));  // several readings see the change
  const NicCaseTraffic result = sampler.stop();
  ASSERT_EQ(result.traffic.size(), 2u);
  ASSERT_EQ(result.peak_bytes_per_second.size(), 2u);
  EXPECT_EQ(result.traffic[0].tx_bytes, 1000000u);
  EXPECT_EQ(result.traffic[0].rx_bytes, 2000000u);
  EXPECT_GE(result.seconds, 0.06);
  EXPECT_GE(result.peak_bytes_per_second[0], 3e6 / result.seconds);
  EXPECT_EQ(result.traffic[1].bytes(), 0u);
  EXPECT_EQ(result.peak_bytes_per_second[1], 0.0);
}

TEST(NicSampler, StoppingWithoutStopJoinsTheThread) {
  CounterTree tree;
  tree.interfaces(interface_line("eth0", 0, 0));
  auto sampler = std::make_unique<NicSampler>(NicCounterSources{tree.dir.root().string(), tree.dir.path("net_dev")},
                                              std::chrono::milliseconds(1000));
  sampler->start();
  sampler->start();  // a case that threw never stopped: starting again ends its thread first
  sampler.reset();   // returns within a sleep slice, not the interval
  SUCCEED();
}

NodeNic nic(const std::string& node, const std::string& device, bool rdma, std::uint64_t bytes, double peak) {
  NodeNic n;
  n.node = node;
  n.traffic.device = device;
  n.traffic.port = rdma ? 1 : 0;
  n.traffic.rdma = rdma;
  n.traffic.tx_bytes = bytes / 2;
  n.traffic.rx_bytes = bytes - bytes / 2;
  n.seconds = 1.0;
  n.peak_bytes_per_second = peak;
  return n;
}

TEST(NicRails, ASlowLinkIsNamedByItsBusiestIntervalNotByItsBytes) {
  // The Slurm test cluster's shape: one interface per node, every node moving its share,
  // one node's link throttled (its busiest interval a tenth of the others').
  std::vector<NodeNic> nics{nic("n1", "eth0", false, 600'000'000, 4.1e8), nic("n2", "eth0", false, 590'000'000, 4.0e8),
                            nic("n3", "eth0", false, 610'000'000, 3.1e7), nic("n4", "eth0", false, 595'000'000, 4.2e8),
                            nic("n1", "docker0", false, 900'000'000, 9e8), nic("n2", "eth1", false, 1000, 1e3)};
  const RailsJudgement judgement = judge_rails(nics, 0.7);
  ASSERT_TRUE(judgement.compared) << judgement.why_not;
  for (std::size_t i = 0; i < 4; ++i) EXPECT_TRUE(nics[i].rail) << i;
  EXPECT_FALSE(nics[4].rail);  // a bridge never is one
  EXPECT_FALSE(nics[5].rail);  // not its node's busiest
  EXPECT_EQ(nics[2].flag, "its busiest interval reached 0.031 GB/s, 0.08 of the median rail's 0.405 GB/s: a slow link");
  for (std::size_t i : {0u, 1u, 3u, 4u, 5u}) EXPECT_EQ(nics[i].flag, "") << i;
  EXPECT_EQ(describe_nic(nics[2]), "n3 eth0");
}

TEST(NicRails, ARailLeftOutIsNamedByItsShare) {
  std::vector<NodeNic> nics{nic("a", "mlx5_0", true, 4'000'000'000, 5e10), nic("a", "mlx5_1", true, 1'000'000'000, 5e10),
                            nic("b", "mlx5_0", true, 4'100'000'000, 5e10), nic("b", "mlx5_1", true, 3'900'000'000, 5e10),
                            nic("a", "eth0", false, 9'000'000'000, 1e11)};
  ASSERT_TRUE(judge_rails(nics, 0.7).compared);
  EXPECT_FALSE(nics[4].rail);  // with RDMA ports, interfaces carry no rail
  EXPECT_EQ(nics[1].flag, "carried 1 GB of the median rail's 3.95 GB (0.25 of its share)");
  EXPECT_EQ(describe_nic(nics[1]), "a mlx5_1:1");
  for (std::size_t i : {0u, 2u, 3u, 4u}) EXPECT_EQ(nics[i].flag, "") << i;
}

TEST(NicRails, TooLittleTrafficOrOneRailIsNotCompared) {
  std::vector<NodeNic> small{nic("a", "eth0", false, 1000, 1e3), nic("b", "eth0", false, 10, 1e1)};
  const RailsJudgement a = judge_rails(small, 0.7);
  EXPECT_FALSE(a.compared);
  EXPECT_EQ(a.why_not, "the median rail carried 5.05e-07 GB in 1 s: too little to compare");
  EXPECT_EQ(small[1].flag, "");
  std::vector<NodeNic> one{nic("a", "eth0", false, 1'000'000'000, 1e9)};
  EXPECT_EQ(judge_rails(one, 0.7).why_not, "1 rail(s) with known counters: nothing to compare with");
}

}  // namespace
}  // namespace commbench
