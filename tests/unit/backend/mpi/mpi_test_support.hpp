// What the tests run under mpirun share: the backend over MPI_COMM_WORLD.
#pragma once

#include <mpi.h>

#include <memory>

#include "commbench/backend/mpi/mpi_backend.hpp"

namespace commbench {

inline std::unique_ptr<mpi::MpiBackend> world_backend() {
  return std::make_unique<mpi::MpiBackend>(std::make_unique<mpi::MpiBootstrap>(MPI_COMM_WORLD));
}

}  // namespace commbench
