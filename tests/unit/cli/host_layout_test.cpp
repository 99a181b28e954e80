// The layout the bandwidth model reads for the ranks of one host: bench-collectives and
// bench-patterns model the first host's, bench-p2p each cell's sending host's (its GPU
// shares that host's NICs with the GPUs of the other ranks there).
#include <gtest/gtest.h>

#include "commbench/analysis/collectives_bandwidth.hpp"

namespace commbench {
namespace {

TEST(HostLayout, CountsTheProcessesAndGpusOfOneHost) {
  const std::vector<std::string> hosts = {"a", "a", "b", "b", "b"};
  const std::vector<std::vector<std::string>> bus_ids = {
      {"0000:01:00.0"}, {"0000:02:00.0"}, {"0000:01:00.0"}, {"0000:02:00.0"}, {"0000:03:00.0"}};
  const JobLayout first = layout_on_host(hosts, bus_ids, "a", 2, 1);
  EXPECT_EQ(first.nodes, 2);
  EXPECT_EQ(first.ranks_per_node, 2);
  EXPECT_EQ(first.gpu_bus_ids, (std::vector<std::string>{"0000:01:00.0", "0000:02:00.0"}));
  const JobLayout second = layout_on_host(hosts, bus_ids, "b", 2, 1);
  EXPECT_EQ(second.ranks_per_node, 3);
  EXPECT_EQ(second.gpu_bus_ids.size(), 3u);
}

TEST(HostLayout, ProcessesDrivingSeveralGpusAndHostRanks) {
  // Two processes with two GPUs each: four ranks on the host.
  const JobLayout gpus =
      layout_on_host({"a", "a"}, {{"0000:01:00.0", "0000:02:00.0"}, {"0000:03:00.0", "0000:04:00.0"}}, "a", 1, 2);
  EXPECT_EQ(gpus.ranks_per_node, 4);
  EXPECT_EQ(gpus.gpu_bus_ids.size(), 4u);
  // Host memory: ranks, no GPUs; a host nobody runs on: nothing.
  const JobLayout host_memory = layout_on_host({"a", "a", "a"}, {{}, {}, {}}, "a", 1, 1);
  EXPECT_EQ(host_memory.ranks_per_node, 3);
  EXPECT_TRUE(host_memory.gpu_bus_ids.empty());
  EXPECT_EQ(layout_on_host({"a"}, {{}}, "elsewhere", 1, 1).ranks_per_node, 0);
}

}  // namespace
}  // namespace commbench
