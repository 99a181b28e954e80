// What the NCCL extensions (peer exchange, streams, spin kernel) need of the backend's
// state, which the backend's own files keep to themselves (nccl_state.hpp): a narrow door
// instead of its insides. nccl_state_access.cpp holds it.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <memory>
#include <string>
#include <vector>

#include "commbench/backend/nccl/nccl_backend.hpp"

namespace commbench::nccl {

// One GPU this process drives, as the extensions see it.
struct DeviceHandle {
  int device = 0;
  int rank = 0;  // NCCL rank in the backend's communicator
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;  // the backend's own stream on this GPU
};

std::vector<DeviceHandle> device_handles(const NcclBackend::State& state);
// The state of `backend` (a stream set enqueues collectives over its sub-communicators).
NcclBackend::State& state_of(NcclBackend& backend);

// Whether every event (one per device) completed, checking NCCL's asynchronous errors
// meanwhile; an error aborts the communicators and throws BackendError naming it.
bool poll_events(NcclBackend::State& state, const std::vector<cudaEvent_t>& events, const char* what);
void wait_for_events(NcclBackend::State& state, const std::vector<cudaEvent_t>& events, const char* what);
// A PendingOperation that completes when everything enqueued on `streams` (one per
// device) so far has completed; test() and wait() poll for asynchronous errors.
std::unique_ptr<PendingOperation> pending_on(std::shared_ptr<NcclBackend::State> state,
                                             const std::vector<cudaStream_t>& streams);
// Enqueues one operation of `c` on `streams` (one per device) instead of the backend's own.
void enqueue_on(const OpCase& c, Buffers& buffers, NcclBackend::State& state, const std::vector<cudaStream_t>& streams);

// BackendError naming `what` and the CUDA or NCCL error string.
void check_cuda_call(cudaError_t code, const std::string& what);
void check_nccl_call(ncclResult_t code, const std::string& what, ncclComm_t comm = nullptr);

}  // namespace commbench::nccl
