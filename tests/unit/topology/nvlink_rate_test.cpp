// Issue 14, defect 8: the per-link NVLink rate depends on the part, not the generation
// alone; where the part cannot be told, the rate is unknown, not a guess.
#include <gtest/gtest.h>

#include "commbench/topology/nvlink_rate.hpp"
#include "model_fixtures.hpp"

namespace commbench {
namespace {

Gpu gpu_with(int sm, const std::string& model, int generation) {
  Gpu gpu;
  gpu.sm = sm;
  gpu.model = model;
  gpu.nvlink_generation = generation;
  return gpu;
}

TEST(NvlinkRate, ComputeCapabilityDecides) {
  EXPECT_DOUBLE_EQ(*nvlink_rate(gpu_with(86, "", 3)).spec_gbps, 14.0625);
  EXPECT_DOUBLE_EQ(*nvlink_rate(gpu_with(86, "", 3)).achievable_gbps, 12.0);  // NCCL's SM86_NVLINK_BW
  EXPECT_DOUBLE_EQ(*nvlink_rate(gpu_with(80, "", 3)).spec_gbps, 25.0);
  EXPECT_DOUBLE_EQ(*nvlink_rate(gpu_with(90, "", 4)).achievable_gbps, 20.6);
  EXPECT_DOUBLE_EQ(*nvlink_rate(gpu_with(100, "", 5)).spec_gbps, 50.0);
  EXPECT_FALSE(nvlink_rate(gpu_with(89, "", 0)).spec_gbps);  // Ada has no NVLink
}

TEST(NvlinkRate, ModelNameWithoutComputeCapability) {
  EXPECT_DOUBLE_EQ(*nvlink_rate(gpu_with(0, "NVIDIA RTX A6000", 0)).spec_gbps, 14.0625);
  EXPECT_DOUBLE_EQ(*nvlink_rate(gpu_with(0, "NVIDIA GeForce RTX 3090", 3)).spec_gbps, 14.0625);
  EXPECT_DOUBLE_EQ(*nvlink_rate(gpu_with(0, "NVIDIA A100-SXM4-80GB", 3)).spec_gbps, 25.0);
  EXPECT_DOUBLE_EQ(*nvlink_rate(gpu_with(0, "Tesla V100-SXM2-32GB", 2)).spec_gbps, 25.0);
}

// A100 moves at most about 230 GB/s over NVLink (NVIDIA's figure), where twelve links at
// NCCL's 20 would make 240; GPUs with fewer links, and other parts, are not capped.
TEST(NvlinkRate, A100IsCappedWhereNvidiaSaysSo) {
  const NvlinkRate by_capability = nvlink_rate(gpu_with(80, "", 3));
  EXPECT_DOUBLE_EQ(nvlink_achievable_gbps(by_capability, 12), 230.0);
  EXPECT_DOUBLE_EQ(nvlink_achievable_gbps(by_capability, 4), 80.0);  // an A30's four links
  const NvlinkRate by_name = nvlink_rate(gpu_with(0, "NVIDIA A100 80GB PCIe", 3));
  EXPECT_DOUBLE_EQ(nvlink_achievable_gbps(by_name, 12), 230.0);
  EXPECT_DOUBLE_EQ(nvlink_achievable_gbps(nvlink_rate(gpu_with(90, "", 4)), 18), 18 * 20.6);
  EXPECT_DOUBLE_EQ(nvlink_achievable_gbps(nvlink_rate(gpu_with(70, "", 2)), 6), 120.0);
  EXPECT_FALSE(nvlink_rate(gpu_with(90, "", 4)).gpu_ceiling_gbps);

  // On a DGX A100 the ring's achievable figure says where it comes from.
  const NodeTopology node = test::model_fixture("ndv4-a100-nvswitch.xml");
  const TheoreticalBusbw ring = theoretical_busbw(Collective::allgather, node, test::gpu_layout(node, 1));
  EXPECT_DOUBLE_EQ(*ring.spec_gbps, 300.0);
  EXPECT_DOUBLE_EQ(*ring.achievable_gbps, 230.0);
  EXPECT_NE(ring.basis.find("; achievable at most 230 GB/s per GPU (NVIDIA's figure for this GPU)"),
            std::string::npos)
      << ring.basis;
}

TEST(NvlinkRate, AmbiguousGenerationStaysUnknown) {
  const NvlinkRate rate = nvlink_rate(gpu_with(0, "", 3));
  EXPECT_FALSE(rate.spec_gbps);
  EXPECT_EQ(
      rate.why_unknown,
      "NVLink 3 runs at 25 GB/s per link on A100 but 14.06 on sm_86 parts, and the compute capability of this GPU "
      "is unknown");
}

TEST(NvlinkRate, Sm86BridgeIsNotTwentyFivePerLink) {
  // Two RTX 3090 with a 4-link bridge: 4 x 14.0625 = 56.25, not 4 x 25 = 100.
  const NodeTopology node = test::model_fixture("rtx3090-nvlink-bridge.xml");
  const TheoreticalBusbw bw = theoretical_busbw(Collective::allreduce, node, test::gpu_layout(node, 1));
  EXPECT_DOUBLE_EQ(*bw.spec_gbps, 56.25);
  EXPECT_DOUBLE_EQ(*bw.achievable_gbps, 48.0);
  EXPECT_EQ(bw.basis, "intra-node: NVLink 3: 4 links x 14.0625 GB/s per GPU (GPU 0) = 56.25 GB/s");
}

TEST(NvlinkRate, UnknownRateMakesTheFigureUnknown) {
  NodeTopology node = test::model_fixture("rtx3090-nvlink-bridge.xml");
  for (Gpu& gpu : node.gpus) gpu.sm = 0;  // as from a source without compute capability or model
  const TheoreticalBusbw bw = theoretical_busbw(Collective::allreduce, node, test::gpu_layout(node, 1));
  EXPECT_FALSE(bw.spec_gbps);
  EXPECT_EQ(bw.basis,
            "intra-node bandwidth unknown: NVLink rate unknown: NVLink 3 runs at 25 GB/s per link on A100 but 14.06 on "
            "sm_86 parts, and the compute capability of this GPU is unknown");
}

}  // namespace
}  // namespace commbench
