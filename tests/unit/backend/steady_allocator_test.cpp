// Part of commbench-mpi-tests (runs under mpirun): the steady allocator removes the page
// faults an MPI library's per-call temporaries cost, and glibc's defaults bring them back
// (so the test can fail). Counted with getrusage, which load on the machine does not blur.
// The fault count with glibc's defaults is Open MPI's (it allocates the temporary on
// every call); another MPI library may need another collective here.
#include <gtest/gtest.h>
#include <malloc.h>
#include <mpi.h>
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "commbench/core/steady_allocator.hpp"

namespace commbench {
namespace {

long minor_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// Minor page faults per MPI_Reduce_scatter_block of 1 MiB per rank, summed over ranks
// (Open MPI allocates a temporary on some ranks only, on every call).
double faults_per_reduce_scatter() {
  int ranks = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const int count = (1 << 20) / 4;
  std::vector<float> send(static_cast<std::size_t>(count) * static_cast<std::size_t>(ranks), 1.0f);
  std::vector<float> recv(static_cast<std::size_t>(count), 0.0f);
  for (int warm = 0; warm < 5; ++warm)
    MPI_Reduce_scatter_block(send.data(), recv.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  constexpr int kCalls = 50;
  const long before = minor_faults();
  for (int call = 0; call < kCalls; ++call)
    MPI_Reduce_scatter_block(send.data(), recv.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  const long own = minor_faults() - before;
  long total = 0;
  MPI_Allreduce(&own, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  return static_cast<double>(total) / kCalls;
}

TEST(SteadyAllocator, RepeatedOperationsFaultNoPagesIn) {
  int ranks = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (ranks < 2) GTEST_SKIP() << "one rank reduces without a temporary";
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer replaces glibc's allocator (its mallopt does nothing): nothing to measure";
#endif
  ::unsetenv("COMMBENCH_MALLOC");  // the test compares glibc's defaults with the steady setting itself
  // glibc's defaults (what a process gets without commbench's start-up call).
  ASSERT_EQ(mallopt(M_TRIM_THRESHOLD, 128 * 1024), 1);
  ASSERT_EQ(mallopt(M_MMAP_MAX, 65536), 1);
  ASSERT_EQ(mallopt(M_MMAP_THRESHOLD, 128 * 1024), 1);
  const double default_faults = faults_per_reduce_scatter();
  ASSERT_EQ(configure_allocator_from_environment(), "steady");
  const double steady_faults = faults_per_reduce_scatter();
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    std::printf(
        "minor page faults per 1 MiB MPI_Reduce_scatter_block, all %d ranks: %.1f with glibc's defaults, "
        "%.2f steady\n",
        ranks, default_faults, steady_faults);
  EXPECT_GT(default_faults, 50.0) << "glibc's defaults fault the temporary in on every call";
  EXPECT_LT(steady_faults, 1.0);
}

}  // namespace
}  // namespace commbench
