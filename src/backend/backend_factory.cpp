#include "commbench/backend/backend_factory.hpp"

#include "commbench/backend/mpi/mpi_backend.hpp"
#include "commbench/config.hpp"
#include "commbench/core/error.hpp"

namespace commbench {

std::string available_backends() { return "mpi"; }

std::unique_ptr<Backend> make_backend(const std::string& name) {
  if (name == "nccl")
    throw UsageError(
        "--backend nccl: this build has no NCCL backend; available: " +
        available_backends());
  if (name != "mpi" && name != "auto") throw UsageError("--backend: unknown value '" + name + "'");
  return std::make_unique<mpi::MpiBackend>(std::make_unique<mpi::MpiBootstrap>(MPI_COMM_WORLD));
}

}  // namespace commbench
