#include "commbench/backend/backend_factory.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "commbench/backend/auto_backend.hpp"
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
  if (flag != nullptr)
    throw UsageError(std::string(flag) + ": applies to the nccl backend only (the mpi backend runs)");
}
#endif

#if COMMBENCH_HAVE_NCCL
// Every rank's host and CUDA devices, on every rank.
std::vector<RankDevices> devices_of_every_rank(Bootstrap& world) {
  std::string why_none;
  std::string own;
  for (const nccl::CudaDeviceInfo& device : nccl::list_cuda_devices(why_none))
    own += (own.empty() ? "" : " ") + device.bus_id;
  std::vector<RankDevices> ranks;
  const std::vector<std::string> gathered = world.all_gather(own);
  for (std::size_t rank = 0; rank < gathered.size(); ++rank) {
    RankDevices seen{world.hostnames()[rank], {}};
    std::size_t start = 0;
    while (start < gathered[rank].size()) {
      const std::size_t end = std::min(gathered[rank].find(' ', start), gathered[rank].size());
      seen.bus_ids.push_back(gathered[rank].substr(start, end - start));
      start = end + 1;
    }
    ranks.push_back(std::move(seen));
  }
  return ranks;
}
#endif

}  // namespace

std::string available_backends() {
  std::string names;
  if (COMMBENCH_HAVE_MPI) names = "mpi";
  if (COMMBENCH_HAVE_NCCL) names += std::string(names.empty() ? "" : ", ") + "nccl";
  return names;
}

std::unique_ptr<Backend> make_backend(const BackendRequest& request, Bootstrap& world, std::string* note) {
  if (note != nullptr) note->clear();
  if (request.name != "mpi" && request.name != "auto" && request.name != "nccl")
    throw UsageError("--backend: unknown value '" + request.name + "'; expected one of: auto, mpi, nccl");
#if COMMBENCH_HAVE_NCCL
  bool use_nccl = request.name == "nccl";
  if (request.name == "auto" && COMMBENCH_HAVE_MPI) {
    const AutoBackendChoice choice = choose_auto_backend(devices_of_every_rank(world), request.gpus_per_process);
    use_nccl = choice.nccl;
    if (note != nullptr) *note = choice.note;
  } else if (request.name == "auto") {
    use_nccl = true;  // no MPI backend to fall back to: one process drives -g GPUs
  }
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
    throw UsageError(
        "--backend nccl: this build has no NCCL backend (configure where CUDA and NCCL are installed, "
        "COMMBENCH_WITH_NCCL=ON); available: " +
        available_backends());
#endif
#if COMMBENCH_HAVE_MPI
  refuse_nccl_only_flags(request);
  return std::make_unique<mpi::MpiBackend>(std::make_unique<mpi::MpiBootstrap>(MPI_COMM_WORLD));
#else
  (void)world;
  (void)note;
  throw UsageError("--backend " + request.name +
                   ": this build has no MPI backend (configure with MPI, "
                   "COMMBENCH_WITH_MPI=ON); available: " +
                   available_backends());
#endif
}

}  // namespace commbench
