// Chooses and builds the backend a user asked for. This is where the NCCL backend
// plugs in; the runner never knows which one it got.
#pragma once

#include <memory>
#include <string>

#include "commbench/backend/backend.hpp"

namespace commbench {

// Names of the backends compiled into this binary, e.g. "mpi" or "mpi, nccl".
std::string available_backends();

// "auto" picks nccl when it is built in and a CUDA device is present, else mpi.
// Collective over MPI_COMM_WORLD. Throws UsageError for a backend this build lacks.
std::unique_ptr<Backend> make_backend(const std::string& name);

}  // namespace commbench
