// bench-collectives' NIC watch on one process: the sampling, the text the ranks pool, the
// records and the rails table, on counter trees written by the test.
#include "commbench/analysis/nic_watch.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "commbench/backend/local_bootstrap.hpp"
#include "commbench/backend/typed_exchange.hpp"
#include "commbench/core/error.hpp"
#include "temp_dir.hpp"

namespace commbench {
namespace {

using testing::TempDir;

std::string net_dev(unsigned long long eth0_rx, unsigned long long eth0_tx) {
  return "Inter-|   Receive |  Transmit\n face |bytes packets|bytes packets\n    lo: 5 1 0 0 0 0 0 0 5 1 0 0 0 0 0 0\n"
         "  eth0: " +
         std::to_string(eth0_rx) + " 1 0 0 0 0 0 0 " + std::to_string(eth0_tx) + " 1 0 0 0 0 0 0\n";
}

OpCase allreduce_case() {
  OpCase c;
  c.op = Collective::allreduce;
  c.dtype = DataType::float32;
  c.redop = ReduceOp::sum;
  c.shape.bytes = 1 << 20;
  return c;
}

TEST(NicWatch, OneNodeSamplesItsPortsAndSaysThereIsNothingToCompare) {
  TempDir dir;
  dir.write("net_dev", net_dev(1000, 2000));
  LocalBootstrap group;
  NicWatch watch(group, true, 0.7, {dir.path("sys"), dir.path("net_dev")});
  watch.start_case();
  dir.write("net_dev", net_dev(5000, 8000));
  std::this_thread::sleep_for(std::chrono::milliseconds(40));
  const std::vector<NodeNic> nics = watch.finish_case(allreduce_case());
  ASSERT_EQ(nics.size(), 1u);
  EXPECT_EQ(nics[0].node, group.hostname());
  EXPECT_EQ(nics[0].traffic.rx_bytes, 4000u);
  EXPECT_EQ(nics[0].traffic.tx_bytes, 6000u);
  EXPECT_TRUE(nics[0].rail);
  EXPECT_EQ(nics[0].flag, "");

  const Record record = nic_record(allreduce_case(), nics[0]);
  const std::vector<Field> fields = record_fields(record);
  ASSERT_EQ(fields.size(), 16u);
  EXPECT_EQ(std::get<std::string>(fields[0].value), "allreduce");
  EXPECT_EQ(std::get<std::int64_t>(fields[4].value), 1 << 20);
  EXPECT_EQ(std::get<std::string>(fields[6].value), "eth0");
  EXPECT_EQ(std::get<std::int64_t>(fields[9].value), 6000);   // tx_bytes
  EXPECT_EQ(std::get<std::int64_t>(fields[10].value), 4000);  // rx_bytes
  EXPECT_NEAR(std::get<double>(fields[12].value), 10000 / nics[0].seconds / 1e9, 1e-15);
  EXPECT_EQ(std::get<std::int64_t>(fields[14].value), 0);  // not flagged

  EXPECT_EQ(watch.flag_notes(),
            std::vector<std::string>{"rails not compared in 1 of 1 cases; the first, allreduce 1048576 bytes: 1 "
                                     "rail(s) with known counters: nothing to compare with"});
  const std::string table = watch.rails_table();
  EXPECT_NE(table.find("# rails: what each node's port carried over the cases"), std::string::npos) << table;
  // The port's line: node, nic, cases, GB, GB/s, busiest GB/s, flagged of compared (none: one rail).
  std::istringstream lines(table);
  std::vector<std::string> port_line;
  for (std::string line; std::getline(lines, line);)
    if (line.find(" eth0 ") != std::string::npos) {
      std::istringstream words(line);
      for (std::string word; words >> word;) port_line.push_back(word);
    }
  EXPECT_EQ(port_line, (std::vector<std::string>{"#", group.hostname(), "eth0", "1", "0.000", port_line.at(5),
                                                 port_line.at(6), "0/0"}))
      << table;
  EXPECT_NE(table.find("# note: rails not compared in 1 of 1 cases"), std::string::npos) << table;
}

TEST(NicWatch, DisabledCostsNothingAndSaysNothing) {
  LocalBootstrap group;
  NicWatch watch(group, false, 0.7);
  watch.start_case();
  EXPECT_TRUE(watch.finish_case(allreduce_case()).empty());
  EXPECT_EQ(watch.rails_table(), "");
  EXPECT_TRUE(watch.flag_notes().empty());
}

TEST(NicWatch, WhatTheRanksPoolReadsBack) {
  NicCaseTraffic traffic;
  traffic.seconds = 0.5;
  NicTraffic port;
  port.device = "mlx5_0";
  port.port = 1;
  port.rdma = true;
  port.tx_bytes = 1ull << 40;
  port.note = "its 32-bit counter wrapped";
  traffic.traffic.push_back(port);
  traffic.peak_bytes_per_second.push_back(4.5e10);
  LocalBootstrap group;
  const std::vector<std::optional<NicCaseTraffic>> pooled = all_gather_as(group, std::optional(traffic));
  ASSERT_EQ(pooled.size(), 1u);
  ASSERT_TRUE(pooled[0].has_value());
  const std::vector<NodeNic> nics = nics_of_node(*pooled[0], "node7");
  ASSERT_EQ(nics.size(), 1u);
  EXPECT_EQ(describe_nic(nics[0]), "node7 mlx5_0:1");
  EXPECT_EQ(nics[0].traffic.tx_bytes, 1ull << 40);
  EXPECT_FALSE(nics[0].traffic.rx_bytes.has_value());
  EXPECT_EQ(nics[0].traffic.note, "its 32-bit counter wrapped");
  EXPECT_DOUBLE_EQ(nics[0].peak_bytes_per_second, 4.5e10);
  EXPECT_DOUBLE_EQ(nics[0].seconds, 0.5);
  // A rank that does not sample its node sends none.
  const std::vector<std::optional<NicCaseTraffic>> none = all_gather_as(group, std::optional<NicCaseTraffic>());
  ASSERT_EQ(none.size(), 1u);
  EXPECT_FALSE(none[0].has_value());
}

// Two RDMA ports on one node are compared with each other: the one that carried a
// twentieth of the other's bytes is named, with the GPUs nearest it.
TEST(NicWatch, AShortRailIsNamedWithTheGpusNearestIt) {
  TempDir dir;
  const auto port = [&](const std::string& device, unsigned long long words) {
    const std::string counters = "sys/class/infiniband/" + device + "/ports/1/counters/";
    std::filesystem::create_directories(dir.path(counters));
    dir.write(counters + "port_xmit_data", std::to_string(words) + "\n");
    dir.write(counters + "port_rcv_data", std::to_string(words) + "\n");
  };
  port("mlx5_0", 0);
  port("mlx5_1", 0);
  dir.write("net_dev", net_dev(0, 0));
  LocalBootstrap group;
  NicWatch watch(group, true, 0.7, {dir.path("sys"), dir.path("net_dev")});
  watch.name_nearest_gpus({{"mlx5_0", {0, 1}}, {"mlx5_1", {6, 7}}});  // any node
  watch.name_nearest_gpus({{"mlx5_1", {2, 3}}}, group.hostname());    // this node's own
  watch.start_case();
  port("mlx5_0", (100ull << 20) / 4);
  port("mlx5_1", (5ull << 20) / 4);
  std::this_thread::sleep_for(std::chrono::milliseconds(80));  // rails are compared over 50 ms or more
  const std::vector<NodeNic> nics = watch.finish_case(allreduce_case());
  ASSERT_EQ(nics.size(), 3u);  // the two ports and eth0, which is no rail beside them
  EXPECT_EQ(nics[0].flag, "");
  EXPECT_NE(nics[1].flag, "");
  const std::vector<std::string> notes = watch.flag_notes();
  ASSERT_EQ(notes.size(), 1u);
  const std::string start = "rail " + group.hostname() +
                            " mlx5_1:1 fell short in 1 of 1 compared cases; first at "
                            "allreduce 1048576 bytes: ";
  EXPECT_EQ(notes[0].rfind(start, 0), 0u) << notes[0];
  const std::string end = "; nearest GPUs 2, 3";
  EXPECT_EQ(notes[0].substr(notes[0].size() - end.size()), end) << notes[0];
  const std::string node = watch.rails_of_node(group.hostname());
  EXPECT_EQ(node.rfind("mlx5_1:1 fell short in 1 of 1 compared rounds (busiest ", 0), 0u) << node;
  const std::string tail = " GB/s; nearest GPUs 2, 3)";
  EXPECT_EQ(node.substr(node.size() - tail.size()), tail) << node;
}

}  // namespace
}  // namespace commbench
