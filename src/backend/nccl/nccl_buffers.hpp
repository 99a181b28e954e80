// The NCCL backend's buffers: a send and a receive buffer on every GPU this process drives,
// from cudaMalloc, or from ncclMemAlloc and registered with the communicator (--register).
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "commbench/backend/backend.hpp"
#include "commbench/core/buffer_region.hpp"
#include "commbench/core/dtype.hpp"
#include "nccl_state.hpp"
#include "nccl_support.hpp"

namespace commbench::nccl::detail {

// One GPU's buffers; the handles are the communicator's registrations (--register).
struct DeviceBuffers {
  int device = 0;
  ncclComm_t comm = nullptr;
  std::byte* send = nullptr;
  std::byte* recv = nullptr;
  void* send_handle = nullptr;
  void* recv_handle = nullptr;
};

class NcclBuffers final : public Buffers {
 public:
  NcclBuffers(std::shared_ptr<NcclBackend::State> state, std::uint64_t send_bytes, std::uint64_t recv_bytes,
              bool registered)
      : state_(std::move(state)), send_bytes_(send_bytes), recv_bytes_(recv_bytes), registered_(registered) {}
  ~NcclBuffers() override {
    state_->destroy_graphs();
    for (std::size_t i = 0; i < per_device.size(); ++i) {
      DeviceBuffers& b = per_device[i];
      cudaSetDevice(b.device);
      // Read the communicator now: an abort after an error leaves it null, and
      // deregistering on an aborted communicator would crash and hide the real error.
      ncclComm_t comm = state_->devices[i].comm;
      if (b.send_handle != nullptr && comm != nullptr) ncclCommDeregister(comm, b.send_handle);
      if (b.recv_handle != nullptr && comm != nullptr) ncclCommDeregister(comm, b.recv_handle);
      release(b.send);
      release(b.recv);
    }
  }
  std::uint64_t send_capacity() const override { return send_bytes_; }
  std::uint64_t recv_capacity() const override { return recv_bytes_; }
  bool registered() const { return registered_; }

  std::byte* allocate(std::uint64_t bytes, cudaStream_t stream) {
    void* p = nullptr;
    const std::size_t size = std::max<std::uint64_t>(bytes, 256);
    if (registered_)
      check_nccl(ncclMemAlloc(&p, size), "ncclMemAlloc");
    else
      check_cuda(cudaMalloc(&p, size), "cudaMalloc");
    // On the device's own (non-blocking) stream: a legacy-stream memset could land after
    // the check pattern that is later written on that stream.
    check_cuda(cudaMemsetAsync(p, 0, size, stream), "cudaMemsetAsync");
    check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    return static_cast<std::byte*>(p);
  }

  std::vector<DeviceBuffers> per_device;

 private:
  void release(std::byte* p) {
    if (p == nullptr) return;
    if (registered_)
      ncclMemFree(p);
    else
      cudaFree(p);
  }
  std::shared_ptr<NcclBackend::State> state_;
  std::uint64_t send_bytes_;
  std::uint64_t recv_bytes_;
  bool registered_;
};

inline NcclBuffers& device_buffers(Buffers& b) { return static_cast<NcclBuffers&>(b); }

// Where `region` starts in one GPU's buffers.
inline std::byte* data_of(const DeviceBuffers& b, const BufferRegion& region, DataType dtype) {
  return (region.buffer == BufferSide::send ? b.send : b.recv) + region.first_element * size_of(dtype);
}

}  // namespace commbench::nccl::detail
