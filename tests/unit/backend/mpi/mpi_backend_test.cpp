// Runs under mpirun with 1, 2 and 4 ranks. Every test is collective: all ranks execute
// the same tests in the same order.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <memory>

#include "commbench/backend/collective_try.hpp"
#include "commbench/backend/mpi/mpi_backend.hpp"
#include "commbench/backend/mpi/mpi_environment.hpp"
#include "commbench/core/error.hpp"
#include "commbench/runner/runner.hpp"
#include "mpi_test_support.hpp"
#include "usage_error.hpp"

namespace commbench {
namespace {

int world_size() {
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

RunnerSettings quick_checked_settings() {
  RunnerSettings s;
  s.stopping.fixed_iterations = 3;
  s.warmup_iterations = 1;
  s.check = true;
  return s;
}

std::vector<OpCase> plan_for(std::vector<Collective> ops, std::vector<DataType> dtypes, std::vector<ReduceOp> redops,
                             int ranks, std::vector<std::uint64_t> sizes = {8, 1000, 65536}) {
  PlanRequest request{std::move(ops),
                      std::move(dtypes),
                      std::move(redops),
                      {Placement::out_of_place, Placement::in_place},
                      std::move(sizes),
                      ranks - 1,
                      ranks};
  return build_plan(request);
}

TEST(MpiBootstrap, AgreementPrimitives) {
  mpi::MpiBootstrap g(MPI_COMM_WORLD);
  const int n = world_size();
  EXPECT_EQ(g.size(), n);
  EXPECT_EQ(g.hostnames().size(), static_cast<std::size_t>(n));
  EXPECT_EQ(g.node_count(), 1);  // mpirun on this one machine
  EXPECT_EQ(g.local_size(), n);
  EXPECT_TRUE(g.any(g.rank() == n - 1));
  EXPECT_FALSE(g.any(false));
  EXPECT_EQ(g.first_rank_where(g.rank() >= 1), n > 1 ? 1 : -1);
  const RankValue top = g.max_with_rank(static_cast<double>(g.rank()));
  EXPECT_EQ(top.rank, n - 1);
  EXPECT_DOUBLE_EQ(top.value, n - 1.0);
  EXPECT_EQ(g.sum(std::uint64_t{1}), static_cast<std::uint64_t>(n));
  EXPECT_DOUBLE_EQ(g.min(static_cast<double>(g.rank())), 0.0);
  EXPECT_EQ(g.broadcast(g.rank() == n - 1 ? "from the last rank" : "", n - 1), "from the last rank");
  const auto gathered = g.all_gather(std::string(static_cast<std::size_t>(g.rank()), 'x'));
  ASSERT_EQ(gathered.size(), static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) EXPECT_EQ(gathered[r], std::string(static_cast<std::size_t>(r), 'x'));
}

// broadcast is a bitwise-or reduction and all_gather pads to the longest text (the
// control plane sends each pair as many bytes one way as the other): the texts must still
// come back exactly, zero bytes and empty ones included, and past the padding limit too.
TEST(MpiBootstrap, TextsSurviveTheSymmetricControlPlane) {
  mpi::MpiBootstrap g(MPI_COMM_WORLD);
  const int n = world_size();
  const std::string binary("a\0b\xff\0", 5);
  EXPECT_EQ(g.broadcast(g.rank() == 0 ? binary : "noise the root's bytes must not meet", 0), binary);
  EXPECT_EQ(g.broadcast(g.rank() == 0 ? "" : "not the root's", 0), "");
  auto text_of = [](int rank) {
    return rank % 2 == 0 ? std::string(static_cast<std::size_t>(3 * rank), '\0') + "z" : "";
  };
  const auto gathered = g.all_gather(text_of(g.rank()));
  ASSERT_EQ(gathered.size(), static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) EXPECT_EQ(gathered[r], text_of(r)) << "rank " << r;
  // One long text whose padding to every rank would pass 64 MiB: the exact-length gather.
  const std::size_t long_length = (std::size_t{64} << 20) / static_cast<std::size_t>(n) + 1;
  auto long_text_of = [&](int rank) { return rank == 0 ? std::string(long_length, 'L') : std::to_string(rank); };
  const auto long_gathered = g.all_gather(long_text_of(g.rank()));
  ASSERT_EQ(long_gathered.size(), static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) EXPECT_EQ(long_gathered[r], long_text_of(r)) << "rank " << r;
}

TEST(MpiRunner, EveryCollectiveEveryHostTypeChecksClean) {
  auto backend = world_backend();
  const int n = backend->group().size();
  const auto plan = plan_for({Collective::allgather, Collective::broadcast, Collective::alltoall, Collective::sendrecv},
                             {DataType::int8, DataType::uint8, DataType::int32, DataType::uint32, DataType::int64,
                              DataType::uint64, DataType::float32, DataType::float64},
                             {ReduceOp::sum}, n);
  const auto reducing = plan_for({Collective::allreduce, Collective::reducescatter, Collective::reduce},
                                 {DataType::int8, DataType::uint32, DataType::float32, DataType::float64},
                                 {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max}, n);
  for (const auto* cases : {&plan, &reducing}) {
    Runner runner(*backend, quick_checked_settings());
    runner.prepare(*cases);
    for (const OpCase& c : *cases) {
      const ResultRow row = runner.run(c);
      ASSERT_TRUE(row.wrong.has_value());
      EXPECT_EQ(*row.wrong, 0u) << describe(c);
      EXPECT_EQ(row.iterations, 3u);
      EXPECT_EQ(row.ranks, n);
      EXPECT_GT(row.time_us, 0.0);
      EXPECT_LE(row.time_min_us, row.time_mean_us * (1 + 1e-12));
      EXPECT_LE(row.time_mean_us, row.time_us * (1 + 1e-12));
      EXPECT_NEAR(row.algbw_gbps, c.shape.bytes / (row.time_us * 1e-6) / 1e9, row.algbw_gbps * 1e-9);
      EXPECT_NEAR(row.busbw_gbps, row.algbw_gbps * bus_bandwidth_factor(c.op, n), 1e-12);
      EXPECT_GE(row.slowest_rank, 0);
      EXPECT_LT(row.slowest_rank, n);
    }
    EXPECT_TRUE(runner.check_failures().empty());
  }
}

// alltoallv under every distribution, through the runner as bench-collectives drives it:
// the check must pass and busbw must be (n-1)/n of algbw. In-place has no form here.
TEST(MpiRunner, AlltoallvChecksCleanUnderEveryDistribution) {
  auto backend = world_backend();
  const int n = backend->group().size();
  EXPECT_TRUE(backend->unsupported_in_place(Collective::alltoallv).has_value());
  for (const PeerDistribution distribution : {PeerDistribution{}, PeerDistribution{PeerDistribution::Kind::zipf, 1.3},
                                              PeerDistribution{PeerDistribution::Kind::hot, 0.9}}) {
    PlanRequest request{{Collective::alltoallv},
                        {DataType::int8, DataType::float64},
                        {ReduceOp::sum},
                        {Placement::out_of_place},
                        {8, 1000, 65536},
                        0,
                        n,
                        distribution};
    const auto plan = build_plan(request);
    Runner runner(*backend, quick_checked_settings());
    runner.prepare(plan);
    for (const OpCase& c : plan) {
      const ResultRow row = runner.run(c);
      ASSERT_TRUE(row.wrong.has_value());
      EXPECT_EQ(*row.wrong, 0u) << describe(c);
      EXPECT_NEAR(row.busbw_gbps, row.algbw_gbps * (n - 1.0) / n, 1e-12) << describe(c);
    }
    EXPECT_TRUE(runner.check_failures().empty());
  }
}

TEST(MpiRunner, AdaptiveModeAgreesOnSampleCountsAcrossRanks) {
  auto backend = world_backend();
  RunnerSettings s;
  s.stopping.min_samples = 5;
  s.stopping.max_seconds = 0.05;
  s.target_batch_seconds = 1e-4;
  Runner runner(*backend, s);
  const auto plan =
      plan_for({Collective::allreduce}, {DataType::float32}, {ReduceOp::sum}, backend->group().size(), {4096});
  runner.prepare(plan);
  const ResultRow row = runner.run(plan.front());
  EXPECT_GE(row.samples, 5u);
  EXPECT_FALSE(row.wrong.has_value());
  // Every rank ran the same number of batches, or the run would have hung.
  EXPECT_DOUBLE_EQ(backend->group().max(static_cast<double>(row.samples)),
                   backend->group().min(static_cast<double>(row.samples)));
}

TEST(MpiRunner, CorruptionIsCaughtAndNamesTheRank) {
  auto backend = world_backend();
  const int n = backend->group().size();
  RunnerSettings s = quick_checked_settings();
  s.corrupt_rank = n - 1;
  Runner runner(*backend, s);
  const auto plan = plan_for({Collective::allreduce}, {DataType::float32}, {ReduceOp::sum}, n, {1024});
  runner.prepare(plan);
  const ResultRow row = runner.run(plan.front());
  EXPECT_EQ(row.wrong.value_or(0), 1u);
  ASSERT_EQ(runner.check_failures().size(), 1u);
  EXPECT_NE(runner.check_failures()[0].find("1 wrong elements, first on rank " + std::to_string(n - 1)),
            std::string::npos)
      << runner.check_failures()[0];
}

TEST(MpiRunner, DisjointSubCommunicatorsMeasureConcurrently) {
  auto world = world_backend();
  const int rank = world->group().rank();
  const int n = world->group().size();
  // Pairs (0,1), (2,3), ...: what validation does to measure node pairs at once.
  auto pair = world->split(rank / 2, rank);
  const int expected_size = (rank / 2) * 2 + 1 < n ? 2 : 1;
  EXPECT_EQ(pair->group().size(), expected_size);
  EXPECT_EQ(pair->group().rank(), rank % 2);
  Runner runner(*pair, quick_checked_settings());
  const auto plan = plan_for({Collective::allreduce, Collective::sendrecv}, {DataType::float32}, {ReduceOp::sum},
                             pair->group().size(), {4096});
  runner.prepare(plan);
  for (const OpCase& c : plan) {
    const ResultRow row = runner.run(c);
    EXPECT_EQ(row.ranks, expected_size);
    EXPECT_EQ(row.wrong.value_or(99), 0u) << describe(c);
  }
  world->group().barrier();
}

TEST(MpiBackend, NonBlockingStartOverlapsHostCompute) {
  auto backend = world_backend();
  const int n = backend->group().size();
  auto plan = plan_for({Collective::allreduce, Collective::allgather, Collective::sendrecv}, {DataType::float64},
                       {ReduceOp::sum}, n, {1 << 20});
  // MPI reads a non-blocking alltoallv's count arrays until it completes: they must outlive start().
  PlanRequest skewed{{Collective::alltoallv},
                     {DataType::float64},
                     {ReduceOp::sum},
                     {Placement::out_of_place},
                     {1 << 20},
                     0,
                     n,
                     PeerDistribution{PeerDistribution::Kind::zipf, 1.0}};
  for (const OpCase& c : build_plan(skewed)) plan.push_back(c);
  auto buffers = backend->allocate(buffers_needed(plan).send_bytes, buffers_needed(plan).recv_bytes);
  for (const OpCase& c : plan) {
    if (c.placement == Placement::in_place && c.op == Collective::sendrecv) continue;  // no MPI-3 call for it
    backend->fill_inputs(c, *buffers);
    auto pending = backend->start(c, *buffers);
    double compute = 0;  // work that overlaps the transfer, as a training step would
    std::uint64_t polls = 0;
    do {
      for (int i = 1; i < 1000; ++i) compute += std::sqrt(static_cast<double>(i));
      ++polls;
    } while (!pending->test());
    pending->wait();
    EXPECT_GT(compute, 0.0);
    EXPECT_EQ(backend->count_wrong(c, *buffers), 0u) << describe(c) << " after " << polls << " polls";
  }
}

TEST(CollectiveTry, OneMessageFromTheFailingRankSameExitCodeEverywhere) {
  mpi::MpiBootstrap g(MPI_COMM_WORLD);
  const int last = g.size() - 1;
  try {
    collective_try(g, [&] {
      if (g.rank() == last) throw UsageError("boom on the last rank");
    });
    FAIL() << "every rank must throw";
  } catch (const ReportedByAnotherRank& e) {
    EXPECT_NE(g.rank(), last);
    EXPECT_EQ(e.exit_code(), ExitCode::usage);
  } catch (const UsageError& e) {
    EXPECT_EQ(g.rank(), last);
    EXPECT_STREQ(e.what(), "boom on the last rank");
    EXPECT_TRUE(e.agreed()) << "the others know: the command may exit without aborting the job";
  }
  EXPECT_NO_THROW(collective_try(g, [] {}));
  // An error outside collective_try is not agreed: the command must abort the job.
  EXPECT_FALSE(BackendError("alone").agreed());
}

TEST(MpiBackend, ImpossibleAllocationIsAUsageErrorOnEveryRank) {
  auto backend = world_backend();
  try {
    backend->allocate(1ull << 50, 1ull << 50);
    FAIL();
  } catch (const ReportedByAnotherRank& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::usage);
  } catch (const UsageError& e) {
    EXPECT_EQ(backend->group().rank(), 0);
    EXPECT_NE(std::string(e.what()).find("-e/--max-bytes"), std::string::npos) << e.what();
  }
}

// Nothing is allocated: the plan is refused before any buffer or measurement.
TEST(MpiBackend, RefusesACallPastTwoToThe31ElementsNamingTheSizeAndTheLargestThatWorks) {
  auto backend = world_backend();
  const int n = world_size();
  const auto plan_of = [n](Collective op, std::uint64_t bytes) {
    return plan_for({op}, {DataType::float32}, {ReduceOp::sum}, n, {bytes});
  };
  EXPECT_EQ(testing::usage_error_of([&] { backend->validate_plan(plan_of(Collective::allreduce, 8ull << 30)); }),
            "-e/--max-bytes: allreduce float of 8589934592 bytes (8GiB) needs 2147483648 elements in one MPI call, "
            "more than its 2^31-1; the largest size that works is 8589934588 bytes (-e 4GiB)");
  EXPECT_EQ(testing::usage_error_of([&] { backend->validate_plan(plan_of(Collective::allreduce, 8589934588)); }),
            "(accepted)");
  EXPECT_EQ(testing::usage_error_of([&] { backend->validate_plan(plan_of(Collective::broadcast, 4ull << 30)); }),
            "(accepted)");
  // allgather's count is each rank's part: n times as many bytes fit.
  const std::uint64_t gathered = (8ull << 30) * static_cast<std::uint64_t>(n);
  const std::string refusal =
      testing::usage_error_of([&] { backend->validate_plan(plan_of(Collective::allgather, gathered)); });
  EXPECT_NE(refusal.find("the largest size that works is " + std::to_string(8589934588ull * n) + " bytes"),
            std::string::npos)
      << refusal;
}

TEST(MpiBackend, RefusesTypesAndReductionsMpiLacks) {
  auto backend = world_backend();
  EXPECT_TRUE(backend->unsupported_reason(Collective::allreduce, DataType::float16, ReduceOp::sum).has_value());
  EXPECT_TRUE(backend->unsupported_reason(Collective::allreduce, DataType::bfloat16, ReduceOp::sum).has_value());
  EXPECT_TRUE(backend->unsupported_reason(Collective::allreduce, DataType::float32, ReduceOp::avg).has_value());
  EXPECT_FALSE(backend->unsupported_reason(Collective::allgather, DataType::float32, ReduceOp::avg).has_value());
  EXPECT_FALSE(backend->unsupported_reason(Collective::allreduce, DataType::int8, ReduceOp::prod).has_value());
}

// MPI is initialised at MPI_THREAD_SINGLE, as MPI_Init, nccl-tests and a bare loop are:
// at FUNNELED Open MPI 4.1 takes locks in its progress path and small collectives read
// slower than those programs' (docs/performance.md). Only the main thread calls MPI.
TEST(MpiEnvironment, AsksForThreadSingleAsMpiInitDoes) {
  int level = -1;
  MPI_Query_thread(&level);
  EXPECT_EQ(level, MPI_THREAD_SINGLE);
}

}  // namespace
}  // namespace commbench

int main(int argc, char** argv) {
  commbench::mpi::MpiEnvironment mpi(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // One rank prints progress; every rank still reports its own failures through its exit code.
  if (rank != 0)
    delete ::testing::UnitTest::GetInstance()->listeners().Release(
        ::testing::UnitTest::GetInstance()->listeners().default_result_printer());
  const int failed = RUN_ALL_TESTS();
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return any_failed;
}
