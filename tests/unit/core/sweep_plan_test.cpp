#include <gtest/gtest.h>

#include "commbench/core/error.hpp"
#include "commbench/core/op_case.hpp"
#include "commbench/core/sweep.hpp"

namespace commbench {
namespace {

TEST(Sweep, DefaultGeometricSweep) {
  const auto sizes = sweep_sizes(SweepSpec{});
  ASSERT_EQ(sizes.size(), 24u);  // 2^3 .. 2^26
  EXPECT_EQ(sizes.front(), 8u);
  EXPECT_EQ(sizes[1], 16u);
  EXPECT_EQ(sizes.back(), 64u << 20);
}

TEST(Sweep, FractionalFactorAlwaysProgresses) {
  SweepSpec spec{1, 10, 1.1, 0};
  const auto sizes = sweep_sizes(spec);
  EXPECT_EQ(sizes, (std::vector<std::uint64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
  SweepSpec f15{8, 64, 1.5, 0};
  EXPECT_EQ(sweep_sizes(f15), (std::vector<std::uint64_t>{8, 12, 18, 27, 40, 60}));
}

TEST(Sweep, LinearSteps) {
  SweepSpec spec{1024, 4096, 2.0, 1024};
  EXPECT_EQ(sweep_sizes(spec), (std::vector<std::uint64_t>{1024, 2048, 3072, 4096}));
}

TEST(Sweep, MaxIsIncludedOnlyWhenReached) {
  SweepSpec spec{8, 100, 2.0, 0};
  EXPECT_EQ(sweep_sizes(spec).back(), 64u);
}

TEST(Sweep, RejectsBadSpecs) {
  EXPECT_THROW(validate(SweepSpec{1024, 8, 2.0, 0}), UsageError);
  try {
    validate(SweepSpec{8, 1024, 1.0, 0});
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("-f/--step-factor"), std::string::npos);
  }
  EXPECT_THROW(validate(SweepSpec{8, 1024, 0.5, 0}), UsageError);
  try {
    validate(SweepSpec{1, 1ull << 30, 2.0, 1});
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("-i/--step-bytes"), std::string::npos);
  }
  try {
    validate(SweepSpec{1 << 20, 1024, 2.0, 0});
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "-b/--min-bytes: 1MiB is larger than -e/--max-bytes 1KiB");
  }
}

TEST(Plan, OrderAndReductionsOnlyForReducingOps) {
  PlanRequest request;
  request.ops = {Collective::allreduce, Collective::allgather};
  request.dtypes = {DataType::float32};
  request.redops = {ReduceOp::sum, ReduceOp::max};
  request.placements = {Placement::out_of_place, Placement::in_place};
  request.sizes = {1024, 2048};
  request.ranks = 4;
  const auto plan = build_plan(request);
  // allreduce: 2 redops x 2 sizes x 2 placements; allgather: 1 x 2 x 2.
  ASSERT_EQ(plan.size(), 12u);
  EXPECT_EQ(plan[0].redop, ReduceOp::sum);
  EXPECT_EQ(plan[0].placement, Placement::out_of_place);
  EXPECT_EQ(plan[1].placement, Placement::in_place);
  EXPECT_EQ(plan[1].shape.bytes, 1024u);
  EXPECT_EQ(plan[2].shape.bytes, 2048u);
  EXPECT_EQ(plan[4].redop, ReduceOp::max);
  EXPECT_EQ(plan[8].op, Collective::allgather);
  EXPECT_EQ(plan[8].redop, ReduceOp::none);
  EXPECT_EQ(plan[8].root, -1);
}

TEST(Plan, SizesThatRoundToTheSameShapeAreMeasuredOnce) {
  PlanRequest request;
  request.ops = {Collective::allgather, Collective::broadcast};
  request.dtypes = {DataType::float64};
  request.redops = {ReduceOp::sum};
  request.placements = {Placement::out_of_place};
  request.sizes = {8, 16, 32, 64};
  request.root = 1;
  request.ranks = 4;
  const auto plan = build_plan(request);
  // allgather of doubles on 4 ranks: 8, 16, 32 all round up to 32 bytes; then 64.
  ASSERT_EQ(plan.size(), 6u);
  EXPECT_EQ(plan[0].shape.bytes, 32u);
  EXPECT_EQ(plan[1].shape.bytes, 64u);
  EXPECT_EQ(plan[2].op, Collective::broadcast);
  EXPECT_EQ(plan[2].root, 1);
  EXPECT_EQ(describe(plan[2]), "broadcast 8B double root 1 out-of-place");
}

}  // namespace
}  // namespace commbench
