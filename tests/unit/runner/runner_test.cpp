#include "commbench/runner/runner.hpp"

#include <gtest/gtest.h>

#include "commbench/core/error.hpp"
#include "fake_backend.hpp"

namespace commbench {
namespace {

using testing::FakeBackend;

std::vector<OpCase> plan_of(std::vector<Collective> ops, std::vector<std::uint64_t> sizes, int ranks) {
  PlanRequest request{
      std::move(ops), {DataType::float32}, {ReduceOp::sum}, {Placement::out_of_place}, std::move(sizes), 0, ranks};
  return build_plan(request);
}

RunnerSettings fixed(std::uint64_t iterations) {
  RunnerSettings settings;
  settings.stopping.fixed_iterations = iterations;
  settings.warmup_iterations = 1;
  return settings;
}

TEST(Runner, ARowCarriesTheMeasurementAndItsBandwidths) {
  FakeBackend backend([](const OpCase&, std::uint64_t) { return 1e-3; });  // 1 ms per operation
  const std::vector<OpCase> plan = plan_of({Collective::allreduce}, {1000000}, backend.ranks());
  Runner runner(backend, fixed(5));
  runner.prepare(plan);
  const ResultRow row = runner.run(plan.front());
  EXPECT_EQ(row.backend, "fake");
  EXPECT_EQ(row.ranks, 4);
  EXPECT_EQ(row.nodes, 1);
  EXPECT_EQ(row.iterations, 5u);
  EXPECT_EQ(row.stop_reason, StopReason::fixed_count);
  EXPECT_DOUBLE_EQ(row.time_us, 1000.0);
  EXPECT_DOUBLE_EQ(row.time_min_us, 1000.0);
  // 1e6 B in 1 ms is 1 GB/s; allreduce on 4 ranks moves 2 * 3/4 of it per rank.
  EXPECT_DOUBLE_EQ(row.algbw_gbps, 1.0);
  EXPECT_DOUBLE_EQ(row.busbw_gbps, 1.5);
  EXPECT_FALSE(row.wrong.has_value());
  EXPECT_TRUE(runner.check_failures().empty());
}

TEST(Runner, TheCorruptRankHookProvesTheCheckCatchesErrors) {
  FakeBackend backend([](const OpCase&, std::uint64_t) { return 1e-4; });
  const std::vector<OpCase> plan = plan_of({Collective::allgather}, {4096}, backend.ranks());
  RunnerSettings settings = fixed(2);
  settings.check = true;
  settings.corrupt_rank = 0;
  Runner runner(backend, settings);
  runner.prepare(plan);
  const ResultRow row = runner.run(plan.front());
  EXPECT_EQ(row.wrong, 1u);
  ASSERT_EQ(runner.check_failures().size(), 1u);
  EXPECT_EQ(runner.check_failures().front().rfind(describe(plan.front()) + ": 1 wrong elements, first on rank 0", 0),
            0u);
  EXPECT_EQ(backend.calls, (std::vector<std::string>{"fill", "single"}));
}

TEST(Runner, TheCaptureRangeHoldsTheTimedBatchesOfTheNamedCasesOnly) {
  FakeBackend backend([](const OpCase&, std::uint64_t) { return 1e-4; });
  backend.can_capture = true;
  const std::vector<OpCase> plan = plan_of({Collective::allreduce, Collective::allgather}, {4096}, backend.ranks());
  RunnerSettings settings = fixed(5);
  settings.profile_range = "allgather 4KiB";
  Runner runner(backend, settings);
  runner.prepare(plan);
  runner.run(plan[0]);
  EXPECT_TRUE(backend.captures.empty()) << "allreduce is not named";
  const std::size_t before = backend.batches.size();
  runner.run(plan[1]);
  // Opened after the warm-up and calibration batches, closed after the last timed one.
  const std::vector<std::pair<bool, std::size_t>> expected{{true, before + 2}, {false, backend.batches.size()}};
  EXPECT_EQ(backend.captures, expected);

  settings.profile_range = "";  // every case
  Runner every(backend, settings);
  every.prepare(plan);
  backend.captures.clear();
  for (const OpCase& c : plan) every.run(c);
  EXPECT_EQ(backend.captures.size(), 4u);

  FakeBackend host([](const OpCase&, std::uint64_t) { return 1e-4; });  // no CUDA context
  Runner without(host, settings);
  without.prepare(plan);
  without.run(plan[0]);
  EXPECT_TRUE(host.captures.empty());
}

TEST(Runner, BuffersFollowTheCurrentCollectiveLargestFirst) {
  FakeBackend backend([](const OpCase&, std::uint64_t) { return 1e-4; });
  const int ranks = backend.ranks();
  std::vector<OpCase> plan = plan_of({Collective::allreduce}, {1 << 20}, ranks);
  for (const OpCase& c : plan_of({Collective::allgather}, {1024}, ranks)) plan.push_back(c);
  Runner runner(backend, fixed(1));
  runner.prepare(plan);
  for (const OpCase& c : plan) runner.run(c);
  runner.run(plan.front());
  const std::uint64_t allreduce_bytes = 2u << 20;         // send + receive of 1 MiB
  const std::uint64_t allgather_bytes = 1024 / 4 + 1024;  // one rank's share + the gathered whole
  EXPECT_EQ(backend.allocations, (std::vector<std::uint64_t>{allreduce_bytes, allgather_bytes, allreduce_bytes}));
}

TEST(Runner, RunBeforePrepareIsAnInternalError) {
  FakeBackend backend([](const OpCase&, std::uint64_t) { return 1e-4; });
  Runner runner(backend, fixed(1));
  const std::vector<OpCase> plan = plan_of({Collective::allreduce}, {8}, backend.ranks());
  EXPECT_THROW(runner.run(plan.front()), BackendError);
}

}  // namespace
}  // namespace commbench
