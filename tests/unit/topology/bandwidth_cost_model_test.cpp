// --predict without --from: each collective's time from the bandwidth model of a real
// NCCL topology dump (8 x H100 SXM), checked against the formula of docs/patterns.md
// worked out from the model's own figure: latency + bytes x bus factor / achievable busbw.
#include "commbench/analysis/bandwidth_cost_model.hpp"

#include <gtest/gtest.h>

#include <string>

#include "commbench/core/collective_descriptor.hpp"
#include "commbench/core/error.hpp"
#include "model_fixtures.hpp"

namespace commbench {
namespace {

NodeTopology dgx_h100() {
  return load_nccl_topo_xml(std::string(COMMBENCH_TOPOLOGY_FIXTURES) + "/nccl/dgx-h100.xml");
}

TEST(BandwidthCostModel, LatencyStepsFollowTheAlgorithms) {
  EXPECT_EQ(latency_steps(Collective::allreduce, 1), 0);
  EXPECT_EQ(latency_steps(Collective::allreduce, 8), 6);  // a tree: 2 x log2(8)
  EXPECT_EQ(latency_steps(Collective::allreduce, 9), 8);  // 2 x ceil(log2(9))
  EXPECT_EQ(latency_steps(Collective::allgather, 8), 7);  // a ring: n - 1
  EXPECT_EQ(latency_steps(Collective::reducescatter, 8), 7);
  EXPECT_EQ(latency_steps(Collective::sendrecv, 8), 1);
}

TEST(BandwidthCostModel, ACollectiveInsideTheNodeIsLatencyPlusBytesOverTheAchievableBusbw) {
  const BandwidthCostModel model(dgx_h100(), 8);
  const TheoreticalBusbw figure = model.figure(Collective::allreduce, 8, 1);
  ASSERT_TRUE(figure.achievable_gbps.has_value()) << figure.basis;
  EXPECT_GT(*figure.achievable_gbps, 300);  // NV18 everywhere: hundreds of GB/s
  const std::uint64_t bytes = 1ull << 30;
  const double expected = kCollectiveBaseLatencySeconds + 6 * kIntraNodeHopLatencySeconds +
                          static_cast<double>(bytes) * 2 * 7 / 8 / (*figure.achievable_gbps * 1e9);
  EXPECT_NEAR(model.seconds({StepKind::collective, Collective::allreduce, bytes, 8, 1}), expected, 1e-12);
  // A tiny message costs its latency only, and more ranks cost more steps.
  const double tiny = model.seconds({StepKind::collective, Collective::allreduce, 8, 8, 1});
  EXPECT_NEAR(tiny, kCollectiveBaseLatencySeconds + 6 * kIntraNodeHopLatencySeconds, 1e-9);
  EXPECT_LT(model.seconds({StepKind::collective, Collective::allreduce, 8, 2, 1}), tiny);
  // A ring collective: n - 1 hops and its own bus factor.
  const TheoreticalBusbw ring = model.figure(Collective::allgather, 8, 1);
  ASSERT_TRUE(ring.achievable_gbps.has_value()) << ring.basis;
  EXPECT_NEAR(model.seconds({StepKind::collective, Collective::allgather, bytes, 8, 1}),
              kCollectiveBaseLatencySeconds + 7 * kIntraNodeHopLatencySeconds +
                  static_cast<double>(bytes) * 7 / 8 / (*ring.achievable_gbps * 1e9),
              1e-12);
}

TEST(BandwidthCostModel, AcrossNodesTheHopsAreNetworkHopsAndTheFigureIsTheNics) {
  NodeTopology node = dgx_h100();
  test::ports_active(node, "InfiniBand");
  const BandwidthCostModel model(node, 8);
  const TheoreticalBusbw inside = model.figure(Collective::allreduce, 8, 1);
  const TheoreticalBusbw across = model.figure(Collective::allreduce, 16, 2);
  ASSERT_TRUE(inside.achievable_gbps && across.achievable_gbps) << across.basis;
  EXPECT_LT(*across.achievable_gbps, *inside.achievable_gbps);
  const double tiny = model.seconds({StepKind::collective, Collective::allreduce, 8, 16, 2});
  EXPECT_NEAR(tiny, kCollectiveBaseLatencySeconds + 8 * kInterNodeHopLatencySeconds, 1e-9);
}

TEST(BandwidthCostModel, NoFigureIsAUsageErrorNamingTheOpAndAskingForASweep) {
  // A node without NICs has no figure between nodes: unknown, not guessed.
  NodeTopology node = dgx_h100();
  node.nics.clear();
  const BandwidthCostModel model(node, 8);
  try {
    model.seconds({StepKind::collective, Collective::allgather, 1 << 20, 16, 2});
    FAIL() << "expected a UsageError";
  } catch (const UsageError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("no bandwidth figure for allgather over 16 ranks on 2 nodes"), std::string::npos)
        << message;
    EXPECT_NE(message.find("give --from"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace commbench
