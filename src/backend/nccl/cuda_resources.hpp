// Owning, move-only wrappers of the CUDA objects the extensions create: an event or a
// stream is destroyed on the device it was made on, whichever way its owner goes.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include "nccl_state_access.hpp"

namespace commbench::nccl {

// A CUDA object made on `device`, destroyed there by `Destroy` when its owner goes.
template <typename Handle, cudaError_t (*Destroy)(Handle)>
class OwnedOnDevice {
 public:
  OwnedOnDevice(int device, Handle handle) : device_(device), handle_(handle) {}
  ~OwnedOnDevice() {
    if (handle_ == nullptr) return;
    cudaSetDevice(device_);
    Destroy(handle_);  // for a stream: returns at once, CUDA releases it once its work is done
  }
  OwnedOnDevice(OwnedOnDevice&& other) noexcept
      : device_(other.device_), handle_(std::exchange(other.handle_, nullptr)) {}
  OwnedOnDevice& operator=(OwnedOnDevice&& other) noexcept {
    std::swap(device_, other.device_);
    std::swap(handle_, other.handle_);
    return *this;
  }
  OwnedOnDevice(const OwnedOnDevice&) = delete;
  OwnedOnDevice& operator=(const OwnedOnDevice&) = delete;

  Handle get() const { return handle_; }
  int device() const { return device_; }

 private:
  int device_;
  Handle handle_;
};

using CudaEvent = OwnedOnDevice<cudaEvent_t, cudaEventDestroy>;
using CudaStream = OwnedOnDevice<cudaStream_t, cudaStreamDestroy>;

// An event recorded on `stream` now. `timed`: cudaEventElapsedTime may measure from or to
// it (which costs a little per record).
inline CudaEvent recorded_event(int device, bool timed, cudaStream_t stream) {
  check_cuda_call(cudaSetDevice(device), "cudaSetDevice");
  cudaEvent_t event = nullptr;
  check_cuda_call(cudaEventCreateWithFlags(&event, timed ? cudaEventDefault : cudaEventDisableTiming),
                  "cudaEventCreate");
  CudaEvent owned(device, event);
  check_cuda_call(cudaEventRecord(event, stream), "cudaEventRecord");
  return owned;
}

// Bytes free on `device` now: what a size flag is checked against before allocating, so a
// size the GPU cannot hold is the user's flag, said as such, not a failed cudaMalloc.
inline std::size_t free_memory_on(int device) {
  check_cuda_call(cudaSetDevice(device), "cudaSetDevice");
  std::size_t free_bytes = 0, total_bytes = 0;
  check_cuda_call(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  return free_bytes;
}

// Non-blocking: never implicitly ordered after the legacy default stream.
inline CudaStream new_stream(int device) {
  check_cuda_call(cudaSetDevice(device), "cudaSetDevice");
  cudaStream_t stream = nullptr;
  check_cuda_call(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  return CudaStream(device, stream);
}

// The raw handles, one per device, as the backend's polling takes them.
inline std::vector<cudaEvent_t> handles_of(const std::vector<CudaEvent>& events) {
  std::vector<cudaEvent_t> handles;
  for (const CudaEvent& event : events) handles.push_back(event.get());
  return handles;
}

inline std::vector<cudaStream_t> handles_of(const std::vector<CudaStream>& streams) {
  std::vector<cudaStream_t> handles;
  for (const CudaStream& stream : streams) handles.push_back(stream.get());
  return handles;
}

// Seconds from `begins[i]` to `ends[i]` on the slowest device.
inline double slowest_elapsed_seconds(const std::vector<CudaEvent>& begins, const std::vector<CudaEvent>& ends) {
  float slowest_ms = 0;
  for (std::size_t i = 0; i < begins.size(); ++i) {
    float ms = 0;
    check_cuda_call(cudaEventElapsedTime(&ms, begins[i].get(), ends[i].get()), "cudaEventElapsedTime");
    slowest_ms = std::max(slowest_ms, ms);
  }
  return static_cast<double>(slowest_ms) / 1e3;
}

}  // namespace commbench::nccl
