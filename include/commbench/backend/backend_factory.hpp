// Chooses and builds the backend a user asked for; the runner never knows which it got.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "commbench/backend/backend.hpp"

namespace commbench {

struct BackendRequest {
  std::string name = "auto";  // auto, mpi, nccl
  // NCCL only; giving them with the MPI backend is a usage error.
  int gpus_per_process = 1;
  bool register_buffers = false;
  std::uint64_t cuda_graph_iterations = 0;
  bool blocking = false;
};

// Names of the backends compiled into this binary: "mpi" or "mpi, nccl".
std::string available_backends();

// "auto" picks nccl when it is built in and every rank sees a CUDA device, else mpi;
// the choice is agreed over `world` so all ranks take the same one. Collective.
// Throws UsageError for a backend this build lacks or NCCL-only flags with mpi, and
// BackendError ("no CUDA device") for nccl on a host without one.
// `note`, when given, receives why `auto` ran the host backend on a machine with GPUs
// (auto_backend.hpp), or stays empty.
std::unique_ptr<Backend> make_backend(const BackendRequest& request, Bootstrap& world, std::string* note = nullptr);

}  // namespace commbench
