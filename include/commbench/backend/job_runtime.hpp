// How this process joins the job: through MPI when the build has it, alone otherwise.
// Commands talk to this instead of to MPI, so the same command builds and runs on a
// GPU machine without any MPI installed (single process, -g N GPUs).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "commbench/backend/arrival_census.hpp"
#include "commbench/backend/bootstrap.hpp"

namespace commbench {

class JobRuntime {
 public:
  virtual ~JobRuntime() = default;
  // A bootstrap over every process of the job.
  virtual std::unique_ptr<Bootstrap> world() = 0;
  // Point to point, before the collective `step`: every rank tells rank 0 it arrived,
  // and rank 0 waits until all did, marking them on `board` (see arrival_census.hpp).
  // `round` tells successive censuses apart; `hosts` as ArrivalBoard::open takes them.
  virtual void take_arrival_census(ArrivalBoard& board, const std::string& step, int round,
                                   std::vector<std::string> hosts) = 0;
  // "Open MPI v4.1.4", or "none (single process)".
  virtual std::string mpi_version() const = 0;
  // Ends every process of the job with `code` (other ranks may be stuck in a collective).
  [[noreturn]] virtual void abort_job(int code) = 0;
};

// Initialises MPI (when built with it) for the life of the returned object. Throws
// BackendError when MPI cannot start.
std::unique_ptr<JobRuntime> start_job_runtime(int* argc, char*** argv);

}  // namespace commbench
