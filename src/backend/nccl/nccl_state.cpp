// The NCCL backend's state (nccl_state.hpp): tearing its GPUs down, and waiting on them
// while NCCL's asynchronous errors are checked.
#include "nccl_state.hpp"

#include <thread>

#include <fmt/format.h>

#include "commbench/core/error.hpp"
#include "nccl_support.hpp"

namespace commbench::nccl {

using detail::check_cuda;

NcclBackend::State::~State() {
  destroy_graphs();
  // Finalize all communicators of this process in one group (required with -g > 1, where
  // finalizing one alone would wait for the others), then destroy them.
  bool any_comm = false;
  for (DeviceContext& d : devices) any_comm = any_comm || d.comm != nullptr;
  if (any_comm) {
    ncclGroupStart();
    for (DeviceContext& d : devices)
      if (d.comm != nullptr) ncclCommFinalize(d.comm);
    ncclGroupEnd();
  }
  for (DeviceContext& d : devices) {
    cudaSetDevice(d.device);
    if (d.comm != nullptr) ncclCommDestroy(d.comm);
    if (d.counter != nullptr) cudaFree(d.counter);
    if (d.start != nullptr) cudaEventDestroy(d.start);
    if (d.stop != nullptr) cudaEventDestroy(d.stop);
    if (d.stream != nullptr) cudaStreamDestroy(d.stream);
  }
}

void NcclBackend::State::destroy_graphs() noexcept {
  for (DeviceContext& d : devices) {
    if (d.graph == nullptr) continue;
    cudaSetDevice(d.device);
    cudaGraphExecDestroy(d.graph);
    d.graph = nullptr;
  }
  graph_key.clear();
}

std::string NcclBackend::State::where(const DeviceContext& d) const {
  return fmt::format("{}, GPU {}, NCCL rank {}", who, d.device, d.rank);
}

void NcclBackend::State::abort_all() noexcept {
  for (DeviceContext& d : devices) {
    if (d.comm != nullptr) ncclCommAbort(d.comm);
    d.comm = nullptr;
  }
}

bool NcclBackend::State::poll(const std::vector<cudaEvent_t>& events, const char* what) {
  bool done = true;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    cudaSetDevice(devices[i].device);
    const cudaError_t state = cudaEventQuery(events[i]);
    if (state == cudaErrorNotReady) {
      done = false;
    } else if (state != cudaSuccess) {
      const std::string message = where(devices[i]) + ": CUDA error while " + what + ": " + cudaGetErrorString(state);
      abort_all();
      throw BackendError(message);
    }
  }
  if (done) return true;
  for (DeviceContext& d : devices) {
    ncclResult_t async = ncclSuccess;
    if (d.comm != nullptr && ncclCommGetAsyncError(d.comm, &async) == ncclSuccess && async != ncclSuccess &&
        async != ncclInProgress) {
      const std::string message = where(d) + ": NCCL error while " + what + ": " + ncclGetErrorString(async) + " (" +
                                  ncclGetLastError(d.comm) + ")";
      abort_all();
      throw BackendError(message);
    }
  }
  return false;
}

void NcclBackend::State::wait_for(const std::vector<cudaEvent_t>& events, const char* what) {
  while (!poll(events, what)) std::this_thread::yield();
}

const PeerCounts& NcclBackend::State::peer_counts_for(const OpCase& c, std::size_t device_index) {
  PeerCountsCache& cache = peer_counts_cache;
  if (cache.per_device.empty() || cache.distribution != c.distribution ||
      cache.elements_per_rank != c.shape.send_elements) {
    cache.per_device.clear();
    for (const DeviceContext& d : devices)
      cache.per_device.push_back(peer_counts(c.distribution, c.shape.send_elements, nranks, d.rank));
    cache.distribution = c.distribution;
    cache.elements_per_rank = c.shape.send_elements;
  }
  return cache.per_device[device_index];
}

void NcclBackend::State::synchronize(const char* what) {
  std::vector<cudaEvent_t> events;
  for (DeviceContext& d : devices) {
    check_cuda(cudaSetDevice(d.device), "cudaSetDevice");
    check_cuda(cudaEventRecord(d.stop, d.stream), "cudaEventRecord");
    events.push_back(d.stop);
  }
  wait_for(events, what);
}

}  // namespace commbench::nccl
