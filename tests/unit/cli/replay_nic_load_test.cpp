// bench-replay's NIC figure: the job's bytes out of each node per second, per NIC of a
// node's topology (the DGX-H100-like NCCL dump of tests/fixtures/topology/nccl: eight
// 400 Gb/s ports).
#include <gtest/gtest.h>

#include <string>

#include "commbench/topology/nccl_topo_xml.hpp"
#include "commbench/analysis/replay_nic_load.hpp"

namespace commbench {
namespace {

const std::string kDgx = std::string(COMMBENCH_TOPOLOGY_FIXTURES) + "/nccl/dgx-h100.xml";

TracedClass traced(std::string op, std::uint64_t bytes, int group, std::uint64_t calls) {
  TracedClass c;
  c.op = std::move(op);
  c.bytes = bytes;
  c.group_ranks = group;
  c.calls = calls;
  c.timed_calls = calls;
  return c;
}

// 16 ranks on 2 nodes; two steps of 0.5 s each.
TraceSummary two_nodes(std::vector<TracedClass> classes) {
  TraceSummary summary;
  summary.world_size = 16;
  summary.classes = std::move(classes);
  for (int step = 1; step <= 2; ++step) {
    StepSummary s;
    s.number = step;
    s.step_seconds = 0.5;
    summary.steps.push_back(s);
  }
  return summary;
}

// The same 16 ranks without profiler steps, each of the two ranks whose traces were read
// in `communication` seconds of timed calls (none: no call was timed).
TraceSummary without_steps(TraceSummary summary, std::optional<double> communication) {
  summary.steps.clear();
  RankTraceSummary rank;
  rank.communication_seconds = communication;
  summary.ranks = {rank, rank};
  return summary;
}

TEST(ReplayNicLoad, BytesOutOfANodePerSecondPerNicOfItsTopology) {
  // 10 all-reduces of 1 GB over all 16 ranks: each node sends 2 x 15/16 GB a call.
  const TraceSummary summary = two_nodes({traced("allreduce", 1'000'000'000, 16, 10)});
  const JobNicLoad load = job_nic_load(summary, 2, load_nccl_topo_xml(kDgx));
  EXPECT_TRUE(load.crosses_nodes);
  EXPECT_DOUBLE_EQ(load.bytes_per_node, 10 * 1e9 * 2 * 15.0 / 16);
  EXPECT_DOUBLE_EQ(load.seconds, 1.0);
  EXPECT_TRUE(load.over_steps);
  EXPECT_EQ(load.nics, 8);
  ASSERT_TRUE(load.nic_gbps);
  EXPECT_DOUBLE_EQ(*load.nic_gbps, 50);
  ASSERT_TRUE(load.gbps_per_nic);
  EXPECT_DOUBLE_EQ(*load.gbps_per_nic, 18.75 / 8);
  EXPECT_EQ(load.text, "2.34 GB/s per NIC of 50 GB/s over the traced steps (8 NICs per node)");
}

TEST(ReplayNicLoad, GroupsInsideANodeAndOneNodeJobsCrossNoNic) {
  // A reduce-scatter over 8 ranks stays on its node; a barrier moves nothing.
  const TraceSummary inside = two_nodes({traced("reducescatter", 1'000'000, 8, 4), traced("barrier", 0, 16, 1)});
  const JobNicLoad load = job_nic_load(inside, 2, load_nccl_topo_xml(kDgx));
  EXPECT_FALSE(load.crosses_nodes);
  EXPECT_EQ(load.text, "no call's group spans the job's 2 nodes: nothing crossed a NIC");
  EXPECT_EQ(job_nic_load(inside, 1, std::nullopt).text,
            "the job ran on one node (its traces name one host): nothing crossed a NIC");
}

TEST(ReplayNicLoad, WithoutATopologyTheNodesRateAndWhatIsMissing) {
  const TraceSummary summary = without_steps(two_nodes({traced("allgather", 16'000'000, 16, 100)}), 2.0);
  const JobNicLoad load = job_nic_load(summary, 2, std::nullopt);
  // 100 x 16 MB x 15/16 out of each node in 2 s of communication.
  EXPECT_DOUBLE_EQ(load.bytes_per_node, 100 * 16e6 * 15.0 / 16);
  EXPECT_FALSE(load.over_steps);
  EXPECT_EQ(load.nics, 0);
  EXPECT_EQ(load.text,
            "0.75 GB/s out of each node while communicating (no profiler steps); its NICs unknown (give --topology "
            "FILE)");
}

TEST(ReplayNicLoad, WithoutStepsTheRateIsTheTimedCallsBytesOverTheirTime) {
  // 100 all-gathers, 60 of them timed, in 2 s: the 40 untimed calls' bytes are not in it.
  TracedClass gathers = traced("allgather", 16'000'000, 16, 100);
  gathers.timed_calls = 60;
  const TraceSummary summary = without_steps(two_nodes({gathers}), 2.0);
  const JobNicLoad load = job_nic_load(summary, 2, std::nullopt);
  EXPECT_DOUBLE_EQ(load.bytes_per_node, 60 * 16e6 * 15.0 / 16);
  EXPECT_EQ(load.text.rfind("0.45 GB/s out of each node while communicating", 0), 0u) << load.text;
}

TEST(ReplayNicLoad, NoStepsAndNoTimedCallGiveNoRate) {
  // The calls' own ranges timed nothing (an NCCL job profiled without CUDA activity): no
  // time to divide the bytes by, and no "0 GB/s".
  const TraceSummary summary = without_steps(two_nodes({traced("allgather", 16'000'000, 16, 100)}), std::nullopt);
  const JobNicLoad load = job_nic_load(summary, 2, load_nccl_topo_xml(kDgx));
  EXPECT_TRUE(load.crosses_nodes);
  EXPECT_FALSE(load.gbps_per_nic.has_value());
  EXPECT_EQ(load.text, "no rate: the traces hold no profiler step and no call the backend timed");
}

}  // namespace
}  // namespace commbench
