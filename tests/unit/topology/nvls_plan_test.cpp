// NCCL's NVLS plan (src/graph/search.cc, tuning.cc at 2.28): k channels at the fastest
// table speed of which k+1 fit a GPU's NVSwitch bandwidth, counted per channel as speed x
// nvlsEfficiency x 2(k-1)/k, at most the graph's second speed on one node.
#include <gtest/gtest.h>

#include "commbench/topology/allreduce_algorithms.hpp"
#include "commbench/topology/nvls_plan.hpp"
#include "model_fixtures.hpp"

namespace commbench {
namespace {

constexpr double kH100 = 18 * 20.6;  // NCCL's NVLink figure for a GPU's 18 NVSwitch links
constexpr double kB200 = 18 * 40.1;

TEST(NvlsPlan, EightHoppers) {
  const std::optional<NvlsPlan> plan = nccl_nvls_plan(kH100, 8, false, 0.85);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->channels, 8);
  EXPECT_DOUBLE_EQ(plan->channel_gbps, 40.0);                           // 9 x 50 = 450 > 370.8; 9 x 40 = 360 fits
  EXPECT_DOUBLE_EQ(plan->second_speed_gbps, 60.0);                      // climbs 50, 60: the table's top, below 80
  EXPECT_NEAR(plan->reduced_per_channel, 40 * 0.85 * 7.0 / 4.0, 1e-9);  // 59.5
  EXPECT_NEAR(plan->one_node_busbw(), 476.0, 1e-9);
}

TEST(NvlsPlan, FourHoppersAreCappedByTheSecondSpeed) {
  // 5 x 60 fits 370.8, so the channels run at the table's top and so does the second
  // speed: 60 per channel, not 60 x 0.85 x 3/2 = 76.5. NCCL's ring plans more here.
  const std::optional<NvlsPlan> plan = nccl_nvls_plan(kH100, 4, false, 0.85);
  ASSERT_TRUE(plan);
  EXPECT_DOUBLE_EQ(plan->channel_gbps, 60.0);
  EXPECT_DOUBLE_EQ(plan->second_speed_gbps, 60.0);
  EXPECT_NEAR(plan->one_node_busbw(), 240.0, 1e-9);
}

TEST(NvlsPlan, EightBlackwellsUseTheirOwnTable) {
  const std::optional<NvlsPlan> plan = nccl_nvls_plan(kB200, 8, true, 0.74);
  ASSERT_TRUE(plan);
  EXPECT_DOUBLE_EQ(plan->channel_gbps, 80.0);  // 9 x 80 = 720 fits 721.8
  EXPECT_DOUBLE_EQ(plan->second_speed_gbps, 90.0);
  EXPECT_NEAR(plan->one_node_busbw(), 720.0, 1e-9);  // 8 x min(80 x 0.74 x 7/4 = 103.6, 90)
}

TEST(NvlsPlan, NoPlanWithoutTwoChannelsOrARoomySpeed) {
  EXPECT_FALSE(nccl_nvls_plan(kH100, 1, false, 0.85));
  EXPECT_FALSE(nccl_nvls_plan(20.0, 8, false, 0.85));  // 9 x 3 = 27 > 20
  // Past 32 GPUs NCCL stops at 32 channels (NCCL_MAX_NVLS_ARITY).
  const std::optional<NvlsPlan> wide = nccl_nvls_plan(kB200, 72, true, 0.74);
  ASSERT_TRUE(wide);
  EXPECT_EQ(wide->channels, 32);
  EXPECT_DOUBLE_EQ(wide->channel_gbps, 20.0);  // 33 x 20 = 660 fits, 33 x 24 = 792 does not
}

TEST(NvlsPlan, TreeCapPerGenerationAndNodeCount) {
  EXPECT_DOUBLE_EQ(nccl_nvls_tree_channel_cap(2, false), 57.7);
  EXPECT_DOUBLE_EQ(nccl_nvls_tree_channel_cap(4, false), 45.5);
  EXPECT_DOUBLE_EQ(nccl_nvls_tree_channel_cap(3, true), 80.0);
  EXPECT_DOUBLE_EQ(nccl_nvls_tree_channel_cap(2, true), 96.0);
}

// Four GPUs of a DGX H100: NVLS plans 4 x 60 = 240, so the ring's 370.8 is what NCCL
// reaches, while NVLS keeps the spec bound (450 x 6/5).
TEST(NvlsPlan, FourGpusOfAnH100NodeAreBestOnTheRing) {
  const NodeTopology node = load_nccl_topo_xml(std::string(COMMBENCH_TOPOLOGY_FIXTURES) + "/nccl/dgx-h100.xml");
  const JobLayout four = test::gpu_layout(node, 1, {0, 1, 2, 3});
  const std::vector<AlgorithmBusbw> algorithms = allreduce_busbw_by_algorithm(node, four);
  ASSERT_EQ(algorithms.size(), 2u);
  EXPECT_EQ(algorithms[1].algorithm, "NVLS");
  EXPECT_NEAR(*algorithms[1].achievable_gbps, 240.0, 1e-9);
  EXPECT_NE(algorithms[1].basis.find("NCCL plans 4 channels at 60 GB/s, x 0.85 (its NVLS efficiency) x 2(k-1)/k, at "
                                     "most 60 GB/s per channel (the graph's second speed) = 240 GB/s"),
            std::string::npos)
      << algorithms[1].basis;
  const TheoreticalBusbw best = theoretical_busbw(Collective::allreduce, node, four);
  EXPECT_NEAR(*best.spec_gbps, 540.0, 1e-9);
  EXPECT_NEAR(*best.achievable_gbps, 370.8, 1e-9);
  EXPECT_EQ(best.algorithm, "NVLS");
  EXPECT_NE(best.basis.find("achievable by ring"), std::string::npos) << best.basis;
}

// Blackwell is read off the GPUs themselves (compute capability 10.x): the DGX H100 dump
// with its GPUs made sm 100 on NVLink 5 takes Blackwell's efficiency and tables; one
// Hopper among them keeps the node on Hopper's (nvlsEfficiency[compCapIndex] in NCCL's
// tuning.cc, indexed by the lowest compute capability).
TEST(NvlsPlan, BlackwellIsReadOffEveryGpu) {
  NodeTopology node = load_nccl_topo_xml(std::string(COMMBENCH_TOPOLOGY_FIXTURES) + "/nccl/dgx-h100.xml");
  std::vector<int> all;
  for (std::size_t g = 0; g < node.gpus.size(); ++g) all.push_back(static_cast<int>(g));
  std::string why_not;
  const std::optional<NvlsSupport> hopper = nvls_support(node, all, why_not);
  ASSERT_TRUE(hopper) << why_not;
  EXPECT_FALSE(hopper->blackwell);
  EXPECT_DOUBLE_EQ(hopper->efficiency, 0.85);
  for (Gpu& gpu : node.gpus) {
    gpu.sm = 100;
    gpu.nvlink_generation = 5;
  }
  const std::optional<NvlsSupport> blackwell = nvls_support(node, all, why_not);
  ASSERT_TRUE(blackwell) << why_not;
  EXPECT_TRUE(blackwell->blackwell);
  EXPECT_DOUBLE_EQ(blackwell->efficiency, 0.74);
  EXPECT_NEAR(blackwell->achievable_gbps_per_gpu, kB200, 1e-9);
  node.gpus[3].sm = 90;
  node.gpus[3].nvlink_generation = 4;
  const std::optional<NvlsSupport> mixed = nvls_support(node, all, why_not);
  ASSERT_TRUE(mixed) << why_not;
  EXPECT_FALSE(mixed->blackwell);
  EXPECT_DOUBLE_EQ(mixed->efficiency, 0.85);  // NCCL takes the job's lowest compute capability
}

// NVLS hardware whose links NCCL's table cannot fill k+1 times: no plan, no achievable
// figure for NVLS (the ring's stands), and the basis says why.
TEST(NvlsPlan, WithoutAPlanNvlsHasNoAchievableFigure) {
  AllreduceInputs inputs;
  inputs.nodes = 1;
  inputs.ranks_per_node = 8;
  inputs.intra = {20.0, 16.0, "NVLink: narrow"};
  inputs.nvls = NvlsSupport{25.0, 20.0, 0.85, false, "GPU 0: 1 NVSwitch link"};
  const std::vector<AlgorithmBusbw> algorithms = allreduce_algorithms(inputs);
  ASSERT_EQ(algorithms.size(), 2u);
  EXPECT_EQ(algorithms[1].algorithm, "NVLS");
  EXPECT_TRUE(algorithms[1].spec_gbps);
  EXPECT_FALSE(algorithms[1].achievable_gbps);
  EXPECT_NE(algorithms[1].basis.find("no speed of NCCL's table fits k+1 times into a GPU's NVSwitch links"),
            std::string::npos)
      << algorithms[1].basis;
}

}  // namespace
}  // namespace commbench
