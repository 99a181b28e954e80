#include "commbench/backend/job_runtime.hpp"

#include <cstdio>
#include <cstdlib>

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
  std::string mpi_version() const override { return mpi::MpiEnvironment::library_version(); }
  [[noreturn]] void abort_job(int code) override {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
  }

 private:
  mpi::MpiEnvironment environment_;
};
#endif

class LocalRuntime final : public JobRuntime {
 public:
  std::unique_ptr<Bootstrap> world() override { return std::make_unique<LocalBootstrap>(); }
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
