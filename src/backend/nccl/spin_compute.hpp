// The GPU compute stand-in: the spin kernel on every GPU this process drives, timed with
// CUDA events (what a stream sees: from the moment the stream reaches the kernel to its end).
#pragma once

#include <memory>
#include <vector>

#include "commbench/backend/compute_standin.hpp"
#include "commbench/backend/nccl/nccl_backend.hpp"
#include "cuda_resources.hpp"

namespace commbench::nccl {

class SpinComputeStandIn final : public ComputeStandIn {
 public:
  explicit SpinComputeStandIn(std::shared_ptr<NcclBackend::State> state);

  std::string occupies() const override;
  double measure_uncorrected(double seconds) override;

  // The kernel for `seconds` (taken as given: apply corrected_request() first) on
  // `streams`, one per device.
  void launch(const std::vector<cudaStream_t>& streams, double seconds);

 private:
  std::shared_ptr<NcclBackend::State> state_;
  std::vector<int> devices_;
  std::vector<int> multiprocessors_;   // per device
  std::vector<CudaStream> measuring_;  // per device: calibration never waits behind other work
};

}  // namespace commbench::nccl
