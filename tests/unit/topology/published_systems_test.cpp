// The table of docs/bandwidth-model.md: published nccl-tests allreduce busbw of real
// systems beside the model's figures for the same layout. A healthy machine never reads
// above the spec; where the algorithm NCCL ran is known, the achievable figure of that
// algorithm is compared, and the relative error is the one the table states.
#include <gtest/gtest.h>

#include <cmath>

#include "commbench/topology/allreduce_algorithms.hpp"
#include "model_fixtures.hpp"

namespace commbench {
namespace {

struct PublishedRow {
  const char* system;
  const char* fixture;  // under tests/fixtures/topology/
  int nodes;
  std::vector<int> gpus;   // positions in node.gpus; empty: all
  const char* link_layer;  // ports stated active with this link layer; "" to keep the dump's
  const char* algorithm;   // what NCCL ran, "" when the source does not say
  double measured_gbps;    // nccl-tests busbw, largest sizes
  double spec_gbps;        // the model's spec (all algorithms)
  double achievable_gbps;  // the model's achievable for `algorithm` (or the best one)
  double error;            // |achievable - measured| / measured, as the table states it
};

const std::vector<PublishedRow>& published_rows() {
  static const std::vector<PublishedRow> rows = {
      {"8 x A100 SXM4 NVSwitch", "model/ndv4-a100-nvswitch.xml", 1, {}, "", "ring", 232.54, 300, 230, 0.011},
      {"8 x H100 SXM NVSwitch, NVLS", "nccl/dgx-h100.xml", 1, {}, "", "NVLS", 480, 700, 476, 0.008},
      {"8 x H200 SXM NVSwitch, NVLS", "nccl/dgx-h100.xml", 1, {}, "", "NVLS", 475, 700, 476, 0.002},
      {"8 x H100 SXM NVSwitch, NCCL_ALGO=Ring", "nccl/dgx-h100.xml", 1, {}, "", "ring", 370, 700, 370.8, 0.002},
      {"8 x PCIe Gen5 GPUs, no NVLink", "model/pcie-8gpu-gen5.xml", 1, {}, "", "", 28, 63, 22, 0.214},
      {"2 x (8 x A100 SXM4, 8 x HDR IB), NCCL_ALGO=Ring",
       "model/ndv4-a100-nvswitch.xml",
       2,
       {},
       "InfiniBand",
       "ring",
       192,
       281.25,
       192,
       0.0},
      {"2 x (8 x H100 SXM, 8 x 400G RoCE), NVLS-tree",
       "nccl/dgx-h100.xml",
       2,
       {},
       "Ethernet",
       "NVLS-tree",
       430,
       750,
       461.6,
       0.073},
      {"2 x A100 PCIe, one NV12 bridge",
       "model/a100-pcie-nv12-pairs-2socket.xml",
       1,
       {0, 1},
       "",
       "ring",
       208,
       300,
       230,
       0.106},
      // The source names no CPU; on an Intel CPU NCCL plans 20 for this ring, 0 % off the
      // measurement (root_complex_test.cpp).
      {"3 x A100 PCIe, bridge on 0-1 only",
       "model/a100-pcie-nv12-pairs-2socket.xml",
       1,
       {0, 1, 2},
       "",
       "ring",
       20,
       31.5,
       24,
       0.2},
  };
  return rows;
}

class PublishedSystems : public ::testing::TestWithParam<PublishedRow> {};

TEST_P(PublishedSystems, MeasuredStaysBelowSpecAndErrorIsAsStated) {
  const PublishedRow& row = GetParam();
  NodeTopology node = load_nccl_topo_xml(std::string(COMMBENCH_TOPOLOGY_FIXTURES) + "/" + row.fixture);
  if (*row.link_layer != '\0') test::ports_active(node, row.link_layer);
  const JobLayout layout = test::gpu_layout(node, row.nodes, row.gpus);
  const TheoreticalBusbw best = theoretical_busbw(Collective::allreduce, node, layout);
  ASSERT_TRUE(best.spec_gbps) << best.basis;
  EXPECT_NEAR(*best.spec_gbps, row.spec_gbps, 0.01) << best.basis;
  EXPECT_LE(row.measured_gbps, *best.spec_gbps) << "a healthy machine read above 100 % of spec";

  double achievable = *best.achievable_gbps;
  if (*row.algorithm != '\0') {
    bool found = false;
    for (const AlgorithmBusbw& algorithm : allreduce_busbw_by_algorithm(node, layout)) {
      if (algorithm.algorithm != row.algorithm) continue;
      achievable = *algorithm.achievable_gbps;
      found = true;
    }
    ASSERT_TRUE(found) << row.algorithm << " is not among the algorithms this layout enables";
  }
  EXPECT_NEAR(achievable, row.achievable_gbps, 0.01);
  const double error = std::abs(achievable - row.measured_gbps) / row.measured_gbps;
  EXPECT_NEAR(error, row.error, 0.001);
}

INSTANTIATE_TEST_SUITE_P(DocsTable, PublishedSystems, ::testing::ValuesIn(published_rows()),
                         [](const ::testing::TestParamInfo<PublishedRow>& info) {
                           return "row" + std::to_string(info.index);
                         });

// What docs/bandwidth-model.md says the model does on 2 x 8 A100 with 8 HDR NICs when
// NCCL chooses: it reports the tree at 198.4 (A100's 230 x 0.92 x 15/16) as the best
// allreduce, 12 % above the 177 (busbw) NCCL's per-channel tree cap (perChMaxTreeBws, not
// modelled) would allow and 3 % above the ring's 192. Modelling
// that cap must change this test and that paragraph together.
TEST(PublishedSystems, TwoA100NodesReportTheUncappedTreeAsDocumented) {
  NodeTopology node = load_nccl_topo_xml(std::string(COMMBENCH_TOPOLOGY_FIXTURES) + "/model/ndv4-a100-nvswitch.xml");
  test::ports_active(node, "InfiniBand");
  const TheoreticalBusbw best = theoretical_busbw(Collective::allreduce, node, test::gpu_layout(node, 2));
  EXPECT_EQ(best.algorithm, "tree");
  ASSERT_TRUE(best.achievable_gbps) << best.basis;
  EXPECT_NEAR(*best.achievable_gbps, 198.4, 0.05) << best.basis;
}

// The acceptance line of issue 14: under 15 % where NCCL's algorithm is known, except the
// row the table marks as a miss (the three GPUs read 83 % of NCCL's figure on any CPU but
// Intel, and the source names none: see docs/bandwidth-model.md).
TEST(PublishedSystems, KnownAlgorithmsWithinFifteenPercent) {
  int misses = 0;
  for (const PublishedRow& row : published_rows()) {
    if (*row.algorithm != '\0' && row.error >= 0.15) ++misses;
  }
  EXPECT_EQ(misses, 1);
}

}  // namespace
}  // namespace commbench
