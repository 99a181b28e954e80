#include "commbench/backend/auto_backend.hpp"

#include <gtest/gtest.h>

namespace commbench {
namespace {

const std::string kGpu0 = "0000:18:00.0", kGpu1 = "0000:2a:00.0";

TEST(AutoBackend, NoGpuAnywhereRunsTheHostBackendSilently) {
  const AutoBackendChoice choice = choose_auto_backend({{"a", {}}, {"a", {}}}, 1);
  EXPECT_FALSE(choice.nccl);
  EXPECT_EQ(choice.note, "");
}

TEST(AutoBackend, OneRankPerGpuRunsNccl) {
  EXPECT_TRUE(choose_auto_backend({{"a", {kGpu0, kGpu1}}, {"a", {kGpu0, kGpu1}}}, 1).nccl);
  // The launcher bound one GPU to each rank.
  EXPECT_TRUE(choose_auto_backend({{"a", {kGpu0}}, {"a", {kGpu1}}, {"b", {kGpu0}}}, 1).nccl);
  // One process driving both GPUs (-g 2).
  EXPECT_TRUE(choose_auto_backend({{"a", {kGpu0, kGpu1}}}, 2).nccl);
}

TEST(AutoBackend, FourRanksOnAOneGpuWorkstationRunTheHostBackendAndSayWhy) {
  const AutoBackendChoice choice =
      choose_auto_backend({{"ws", {kGpu0}}, {"ws", {kGpu0}}, {"ws", {kGpu0}}, {"ws", {kGpu0}}}, 1);
  EXPECT_FALSE(choice.nccl);
  EXPECT_EQ(choice.note,
            "--backend auto chose mpi: 4 ranks on host ws need 4 GPUs for NCCL (it cannot put two ranks on one GPU) "
            "but the host has 1; to measure the GPUs start 1 rank per node");
}

TEST(AutoBackend, OverlappingButDifferentSetsRunTheHostBackend) {
  // Rank 0 sees both GPUs, rank 1 only the first: device selection would refuse NCCL.
  const AutoBackendChoice choice = choose_auto_backend({{"a", {kGpu0, kGpu1}}, {"a", {kGpu0}}}, 1);
  EXPECT_FALSE(choice.nccl);
  EXPECT_EQ(choice.note,
            "--backend auto chose mpi: the ranks on host a see overlapping but different GPU sets "
            "(CUDA_VISIBLE_DEVICES), which NCCL device selection refuses");
  // Disjoint sets with too few GPUs each for -g 2.
  EXPECT_FALSE(choose_auto_backend({{"a", {kGpu0}}, {"a", {kGpu1}}}, 2).nccl);
}

TEST(AutoBackend, TooFewGpusForGpusPerProcessOrARankWithoutOne) {
  EXPECT_FALSE(choose_auto_backend({{"a", {kGpu0, kGpu1}}}, 4).nccl);
  const AutoBackendChoice blind = choose_auto_backend({{"a", {kGpu0}}, {"b", {}}}, 1);
  EXPECT_FALSE(blind.nccl);
  EXPECT_EQ(blind.note, "--backend auto chose mpi: rank 1 (host b) sees no CUDA device");
}

}  // namespace
}  // namespace commbench
