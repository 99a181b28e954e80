#include "spin_compute.hpp"

#include <cmath>

#include <fmt/format.h>

#include "spin_kernel.hpp"

namespace commbench::nccl {

SpinComputeStandIn::SpinComputeStandIn(std::shared_ptr<NcclBackend::State> state) : state_(std::move(state)) {
  for (const DeviceHandle& handle : device_handles(*state_)) {
    int multiprocessors = 0;
    check_cuda_call(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, handle.device),
                    "cudaDeviceGetAttribute(multiProcessorCount)");
    devices_.push_back(handle.device);
    multiprocessors_.push_back(multiprocessors);
    measuring_.push_back(new_stream(handle.device));
  }
}

std::string SpinComputeStandIn::occupies() const {
  std::string text;
  for (std::size_t i = 0; i < devices_.size(); ++i)
    text += fmt::format("{}GPU {}: {} blocks x {} threads, one on each of its {} SMs", text.empty() ? "" : "; ",
                        devices_[i], multiprocessors_[i], kSpinThreadsPerBlock, multiprocessors_[i]);
  return text;
}

void SpinComputeStandIn::launch(const std::vector<cudaStream_t>& streams, double seconds) {
  const auto nanoseconds = static_cast<std::uint64_t>(std::llround(std::max(0.0, seconds) * 1e9));
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    check_cuda_call(cudaSetDevice(devices_[i]), "cudaSetDevice");
    launch_spin(nanoseconds, multiprocessors_[i], streams[i]);
    check_cuda_call(cudaGetLastError(), "spin kernel launch");
  }
}

double SpinComputeStandIn::measure_uncorrected(double seconds) {
  std::vector<CudaEvent> begins, ends;
  for (std::size_t i = 0; i < devices_.size(); ++i)
    begins.push_back(recorded_event(devices_[i], true, measuring_[i].get()));
  launch(handles_of(measuring_), seconds);
  for (std::size_t i = 0; i < devices_.size(); ++i)
    ends.push_back(recorded_event(devices_[i], true, measuring_[i].get()));
  wait_for_events(*state_, handles_of(ends), "measuring the spin kernel");
  return slowest_elapsed_seconds(begins, ends);
}

}  // namespace commbench::nccl
