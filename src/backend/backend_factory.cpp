#include "commbench/backend/backend_factory.hpp"

#include "commbench/config.hpp"
#include "commbench/core/error.hpp"
#if COMMBENCH_HAVE_MPI
#include "commbench/backend/mpi/mpi_backend.hpp"
#endif
#if COMMBENCH_HAVE_NCCL
#include "commbench/backend/nccl/nccl_backend.hpp"
#endif

namespace commbench {
namespace {

#if COMMBENCH_HAVE_MPI
void refuse_nccl_only_flags(const BackendRequest& r) {
  const char* flag = nullptr;
  if (r.gpus_per_process != 1) flag = "-g/--gpus-per-process";
  if (r.register_buffers) flag = "--register";
  if (r.cuda_graph_iterations != 0) flag = "-G/--cuda-graph";
  if (r.blocking) flag = "-z/--blocking";
  if (flag != nullptr) throw UsageError(std::string(flag) + ": applies to the nccl backend only (the mpi backend runs)");
}
#endif

}  // namespace

std::string available_backends() {
  std::string names;
  if (COMMBENCH_HAVE_MPI) names = "mpi";
  if (COMMBENCH_HAVE_NCCL) names += std::string(names.empty() ? "" : ", ") + "nccl";
  return names;
}

std::unique_ptr<Backend> make_backend(const BackendRequest& request, Bootstrap& world) {
  if (request.name != "mpi" && request.name != "auto" && request.name != "nccl")
    throw UsageError("--backend: unknown value '" + request.name + "'; expected one of: auto, mpi, nccl");
#if COMMBENCH_HAVE_NCCL
  bool use_nccl = request.name == "nccl";
  if (request.name == "auto") use_nccl = world.min(nccl::visible_cuda_devices() > 0 ? 1.0 : 0.0) > 0.5 || !COMMBENCH_HAVE_MPI;
  if (use_nccl) {
    nccl::NcclOptions options;
    options.gpus_per_process = request.gpus_per_process;
    options.register_buffers = request.register_buffers;
    options.cuda_graph_iterations = request.cuda_graph_iterations;
    options.blocking = request.blocking;
    return std::make_unique<nccl::NcclBackend>(world.split(0, world.rank()), options);
  }
#else
  if (request.name == "nccl")
    throw UsageError("--backend nccl: this build has no NCCL backend (configure where CUDA and NCCL are installed, "
                     "COMMBENCH_WITH_NCCL=ON); available: " + available_backends());
#endif
#if COMMBENCH_HAVE_MPI
  refuse_nccl_only_flags(request);
  return std::make_unique<mpi::MpiBackend>(std::make_unique<mpi::MpiBootstrap>(MPI_COMM_WORLD));
#else
  (void)world;
  throw UsageError("--backend " + request.name + ": this build has no MPI backend (configure with MPI, "
                   "COMMBENCH_WITH_MPI=ON); available: " + available_backends());
#endif
}

}  // namespace commbench
