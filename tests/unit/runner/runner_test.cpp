#include "commbench/runner/runner.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "commbench/core/error.hpp"
#include "commbench/core/profile_range.hpp"
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

TEST(Runner, ARowCarriesWhatTheLibraryChoseAndHowItVaried) {
  ResultRow row;
  fill_library_choices(NcclChoiceSummary{}, row);  // nothing reported: every field empty
  EXPECT_EQ(row.nccl_algo + row.nccl_proto + row.nccl_channels + row.nccl_split, "");
  NcclChoiceTally tally;
  for (int i = 0; i < 3; ++i) tally.add({"RING", "SIMPLE", 16, 16});
  tally.add({"TREE", "SIMPLE", 24, 16});
  fill_library_choices(tally.take(), row);
  EXPECT_EQ(row.nccl_algo, "mixed");
  EXPECT_EQ(row.nccl_proto, "SIMPLE");
  EXPECT_EQ(row.nccl_channels, "mixed");
  EXPECT_EQ(row.nccl_split, "algo RING 3, TREE 1; channels 16 3, 24 1");
  // The fake backend, like MPI, reports none and says why.
  FakeBackend backend([](const OpCase&, std::uint64_t) { return 1e-3; });
  EXPECT_EQ(backend.library_choices_unavailable(),
            "nccl_algo, nccl_proto, nccl_channels: empty, the fake backend reports no algorithm choice (NCCL's "
            "profiler plugin interface does)");
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

// An allreduce and an allgather of 4 KiB on a fake backend with a CUDA context to
// capture, --profile-range naming the allgather.
struct NamedCapture {
  FakeBackend backend{[](const OpCase&, std::uint64_t) { return 1e-4; }};
  std::vector<OpCase> plan;
  RunnerSettings settings = fixed(5);
  NamedCapture() {
    backend.can_capture = true;
    plan = plan_of({Collective::allreduce, Collective::allgather}, {4096}, backend.ranks());
    settings.profile_range = "allgather 4KiB";
  }
};

TEST(Runner, TheCaptureRangeHoldsTheTimedBatchesOfTheNamedCasesOnly) {
  NamedCapture named;
  auto& [backend, plan, settings] = named;
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

#if defined(COMMBENCH_NVTX_RECORDER)
// The ranges a process emitted, read from the NVTX recorder's log as a tree per thread:
// each node's name and its children in order.
struct RecordedRange {
  std::string name;
  std::vector<RecordedRange> children;
};

std::vector<RecordedRange> recorded_ranges(const std::filesystem::path& log) {
  std::ifstream in(log);
  RecordedRange root;
  std::vector<RecordedRange*> open{&root};
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> fields;
    std::stringstream split(line);
    for (std::string field; std::getline(split, field, '\t');) fields.push_back(field);
    if (fields.size() >= 4 && fields[1] == "push") {
      open.back()->children.push_back({fields[3], {}});
      open.push_back(&open.back()->children.back());
    } else if (fields.size() >= 2 && fields[1] == "pop" && open.size() > 1) {
      open.pop_back();
    }
  }
  EXPECT_EQ(open.size(), 1u) << "ranges left open";
  return root.children;
}

std::vector<std::string> names_of(const std::vector<RecordedRange>& ranges) {
  std::vector<std::string> names;
  for (const RecordedRange& range : ranges) names.push_back(range.name.substr(0, range.name.find(" (")));
  return names;
}

// Under --profile-range the capture opens after the case's own range began, so a profile
// holds only what runs inside it: a range there must name the case (seen under nsys on an
// H100, 2026-11-26: batches that named no collective). Runs with the test's NVTX recorder
// as the tool, attached here, before anything in this process emitted a range.
TEST(Runner, TheCaptureRangeHoldsARangeNamingItsCaseAroundTheTimedBatches) {
  const std::filesystem::path record =
      std::filesystem::temp_directory_path() / ("commbench-nvtx-" + std::to_string(::getpid()));
  std::filesystem::create_directories(record);
  ::setenv("COMMBENCH_NVTX_RECORD", record.c_str(), 1);
  ::setenv("NVTX_INJECTION64_PATH", COMMBENCH_NVTX_RECORDER, 1);
  // Run alone (as ctest runs every test), nothing emitted a range before: a recorder that
  // did not attach is a failure, not a reason to check nothing.
  if (::testing::UnitTest::GetInstance()->test_to_run_count() == 1) {
    ASSERT_TRUE(profiler_attached()) << "the NVTX recorder " << COMMBENCH_NVTX_RECORDER << " did not attach";
  } else if (!profiler_attached()) {
    GTEST_SKIP() << "an earlier test of this process decided no tool is attached";
  }
  NamedCapture named;
  Runner runner(named.backend, named.settings);
  const std::vector<OpCase>& plan = named.plan;
  runner.prepare(plan);
  for (const OpCase& c : plan) runner.run(c);

  const std::vector<RecordedRange> cases = recorded_ranges(record / ("nvtx-" + std::to_string(::getpid()) + ".log"));
  std::filesystem::remove_all(record);
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(names_of(cases[0].children),
            (std::vector<std::string>{"prepare", "warm-up", "calibration", "timed batches", "combining results"}));
  EXPECT_EQ(cases[1].name, describe(plan[1]));
  EXPECT_EQ(names_of(cases[1].children),
            (std::vector<std::string>{"prepare", "warm-up", "calibration", describe(plan[1]), "combining results"}));
  const RecordedRange& captured = cases[1].children[3];
  EXPECT_EQ(captured.name, describe(plan[1]) + " (capture range)");
  ASSERT_EQ(names_of(captured.children), std::vector<std::string>{"timed batches"});
  EXPECT_FALSE(captured.children[0].children.empty());
}
#endif

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
