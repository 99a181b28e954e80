#include "commbench/backend/job_runtime.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "commbench/backend/local_bootstrap.hpp"
#include "commbench/config.hpp"
#if COMMBENCH_HAVE_MPI
#include <mpi.h>

#include "commbench/backend/mpi/mpi_bootstrap.hpp"
#include "commbench/backend/mpi/mpi_environment.hpp"
#endif

namespace commbench {
namespace {

#if COMMBENCH_HAVE_MPI
class MpiRuntime final : public JobRuntime {
 public:
  MpiRuntime(int* argc, char*** argv) : environment_(argc, argv) {}
  std::unique_ptr<Bootstrap> world() override { return std::make_unique<mpi::MpiBootstrap>(MPI_COMM_WORLD); }
  void take_arrival_census(ArrivalBoard& board, const std::string& step, int round,
                           std::vector<std::string> hosts) override;
  std::string mpi_version() const override { return mpi::MpiEnvironment::library_version(); }
  [[noreturn]] void abort_job(int code) override {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
  }

 private:
  mpi::MpiEnvironment environment_;
};

// On MPI_COMM_WORLD itself: duplicating it (the world bootstrap's first act) is already
// collective. The tags are the census's own; nothing else sends on MPI_COMM_WORLD.
// Rank 0 answers every report with a message of the same size, sent before it waits:
// the census stays as symmetric as the rest of the control plane (mpi_bootstrap.cpp says
// why), and a rank waits for rank 0 alone, as it would at the next collective anyway.
void MpiRuntime::take_arrival_census(ArrivalBoard& board, const std::string& step, int round,
                                     std::vector<std::string> hosts) {
  constexpr int kCensusTag = 7400;
  constexpr int kAnswerTag = 7500;
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size == 1) return;
  if (rank != 0) {
    // Small enough to go eagerly: the sender does not wait for rank 0 to match it.
    mpi::check_mpi(MPI_Send(&round, 1, MPI_INT, 0, kCensusTag + round, MPI_COMM_WORLD), "MPI_Send (arrival)");
    int answer = 0;
    mpi::check_mpi(MPI_Recv(&answer, 1, MPI_INT, 0, kAnswerTag + round, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                   "MPI_Recv (arrival answer)");
    return;
  }
  board.open(step, size, std::move(hosts));
  const std::size_t peers = static_cast<std::size_t>(size - 1);
  std::vector<MPI_Request> answers(peers);
  for (int peer = 1; peer < size; ++peer)
    mpi::check_mpi(MPI_Isend(&round, 1, MPI_INT, peer, kAnswerTag + round, MPI_COMM_WORLD,
                             &answers[static_cast<std::size_t>(peer - 1)]),
                   "MPI_Isend (arrival answer)");
  std::vector<int> rounds(static_cast<std::size_t>(size));
  std::vector<MPI_Request> requests(peers);
  for (int peer = 1; peer < size; ++peer)
    mpi::check_mpi(MPI_Irecv(&rounds[static_cast<std::size_t>(peer)], 1, MPI_INT, peer, kCensusTag + round,
                             MPI_COMM_WORLD, &requests[static_cast<std::size_t>(peer - 1)]),
                   "MPI_Irecv (arrival)");
  std::vector<int> done(requests.size());
  int outstanding = size - 1;
  while (outstanding > 0) {
    int count = 0;
    mpi::check_mpi(
        MPI_Testsome(static_cast<int>(requests.size()), requests.data(), &count, done.data(), MPI_STATUSES_IGNORE),
        "MPI_Testsome (arrival)");
    for (int k = 0; k < count; ++k) board.mark_arrived(done[static_cast<std::size_t>(k)] + 1);
    outstanding -= count;
    // A peer late by seconds (a stall, a slow start) should not cost a core the
    // other ranks on this node need to start.
    if (outstanding > 0 && count == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  // Every peer has reported, so every answer is matched or about to be: eager, it is done.
  mpi::check_mpi(MPI_Waitall(static_cast<int>(answers.size()), answers.data(), MPI_STATUSES_IGNORE),
                 "MPI_Waitall (arrival answers)");
  board.close();
}
#endif

class LocalRuntime final : public JobRuntime {
 public:
  std::unique_ptr<Bootstrap> world() override { return std::make_unique<LocalBootstrap>(); }
  void take_arrival_census(ArrivalBoard&, const std::string&, int, std::vector<std::string>) override {}
  std::string mpi_version() const override { return "none (single process)"; }
  [[noreturn]] void abort_job(int code) override {
    std::fflush(nullptr);
    std::_Exit(code);
  }
};

}  // namespace

std::unique_ptr<JobRuntime> start_job_runtime(int* argc, char*** argv) {
#if COMMBENCH_HAVE_MPI
  return std::make_unique<MpiRuntime>(argc, argv);
#else
  (void)argc;
  (void)argv;
  return std::make_unique<LocalRuntime>();
#endif
}

}  // namespace commbench
