#include "commbench/pattern/parallel_layout.hpp"

#include <algorithm>

#include <gtest/gtest.h>

#include "usage_error.hpp"

namespace commbench {
namespace {

using testing::usage_error_of;

ParallelLayout megatron_2x2x2() {
  ParallelLayout layout;
  layout.tensor = 2;
  layout.pipeline = 2;
  layout.data = 2;
  layout.ranks_per_node = 4;
  return layout;
}

TEST(ParallelLayout, TensorGroupsAreConsecutiveRanks) {
  const auto layout = megatron_2x2x2();
  EXPECT_EQ(layout.members(GroupRole::tensor, 0), (std::vector<int>{0, 1}));
  EXPECT_EQ(layout.members(GroupRole::tensor, 5), (std::vector<int>{4, 5}));
}

TEST(ParallelLayout, DataAndPipelineGroupsFollowMegatronOrder) {
  const auto layout = megatron_2x2x2();
  // rank = tp + 2 * (dp + 2 * pp)
  EXPECT_EQ(layout.members(GroupRole::data, 0), (std::vector<int>{0, 2}));
  EXPECT_EQ(layout.members(GroupRole::data, 5), (std::vector<int>{5, 7}));
  EXPECT_EQ(layout.members(GroupRole::pipeline, 0), (std::vector<int>{0, 4}));
  EXPECT_EQ(layout.members(GroupRole::pipeline, 3), (std::vector<int>{3, 7}));
  EXPECT_EQ(layout.pipeline_rank(6), 1);
  EXPECT_EQ(layout.data_rank(6), 1);
  EXPECT_EQ(layout.tensor_rank(6), 0);
}

TEST(ParallelLayout, ExpertGroupsSplitTheDataGroup) {
  ParallelLayout layout;
  layout.data = 8;
  layout.expert = 4;
  layout.ranks_per_node = 8;
  EXPECT_EQ(layout.members(GroupRole::expert, 5), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(layout.members(GroupRole::expert_data, 5), (std::vector<int>{1, 5}));
}

TEST(ParallelLayout, NodeGroupsOfTheDataGroup) {
  ParallelLayout layout;
  layout.data = 8;
  layout.ranks_per_node = 4;
  EXPECT_EQ(layout.members(GroupRole::intra_node, 6), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(layout.members(GroupRole::inter_node, 6), (std::vector<int>{2, 6}));
}

TEST(ParallelLayout, EveryRankIsInExactlyOneGroupPerRole) {
  const auto layout = megatron_2x2x2();
  for (int role = 0; role < kGroupRoleCount; ++role) {
    int covered = 0;
    for (int rank = 0; rank < layout.ranks(); ++rank) {
      const auto group = layout.members(static_cast<GroupRole>(role), rank);
      EXPECT_NE(std::find(group.begin(), group.end(), rank), group.end());
      if (group.front() == rank) covered += static_cast<int>(group.size());
    }
    EXPECT_EQ(covered, layout.ranks()) << name_of(static_cast<GroupRole>(role));
  }
}

TEST(ParallelLayout, RefusesLayoutsThatDoNotFitTheJob) {
  auto layout = megatron_2x2x2();
  EXPECT_EQ(usage_error_of([&] { layout.validate(6); }), "--tp 2 x --pp 2 x --dp 2 = 8 ranks, but the job has 6");
  layout.expert = 3;
  EXPECT_EQ(usage_error_of([&] { layout.validate(8); }),
            "--ep 3: must divide the data-parallel size 2 (experts are sharded over data-parallel ranks)");
  layout.expert = 1;
  layout.pipeline = 0;
  EXPECT_EQ(usage_error_of([&] { layout.validate(0); }), "--pp 0: must be at least 1");
}

}  // namespace
}  // namespace commbench
