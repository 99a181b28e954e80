// The NCCL backend's state, shared by the backend's own files: the GPUs this process
// drives, their communicators and streams, and the polling that surfaces NCCL's errors.
// The extensions see it only through nccl_state_access.hpp.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "commbench/backend/nccl/nccl_backend.hpp"
#include "commbench/core/peer_distribution.hpp"

namespace commbench::nccl {

// One GPU this process drives, with its NCCL rank and the CUDA objects timing needs.
struct DeviceContext {
  int device = 0;
  int rank = 0;
  int compute_major = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  unsigned long long* counter = nullptr;
  cudaGraphExec_t graph = nullptr;
  std::string description;
  std::string bus_id;  // lower case
};

struct NcclBackend::State {
  NcclOptions options;
  int nranks = 0;
  std::string who;  // "rank 3 (host gpu01)"
  std::vector<DeviceContext> devices;
  // The captured graph belongs to one case and one set of buffers.
  std::string graph_key;
  // Why NCCL's choices cannot be reported (the user's own profiler plugin, an NCCL
  // without interface v3); nullopt when commbench's plugin is loaded.
  std::optional<std::string> choices_unavailable;

  ~State();

  // Captured graphs reference the buffers they were captured with (and NCCL registers
  // those buffers for the graph's lifetime): they go before the buffers do.
  void destroy_graphs() noexcept;

  std::string where(const DeviceContext& d) const;

  void abort_all() noexcept;

  // Whether every one of `events` (one per device) has completed, polling NCCL for
  // asynchronous errors while any has not: a peer that died or a network failure
  // surfaces here (communicators aborted, BackendError) instead of as a silent hang.
  bool poll(const std::vector<cudaEvent_t>& events, const char* what);

  void wait_for(const std::vector<cudaEvent_t>& events, const char* what);

  // alltoallv's counts for each device's rank, kept for the last case so that timed loops
  // do not rebuild them (O(ranks)) every iteration.
  struct PeerCountsCache {
    PeerDistribution distribution;
    std::uint64_t elements_per_rank = 0;
    std::vector<PeerCounts> per_device;
  };
  PeerCountsCache peer_counts_cache;

  const PeerCounts& peer_counts_for(const OpCase& c, std::size_t device_index);

  void synchronize(const char* what);
};

}  // namespace commbench::nccl
