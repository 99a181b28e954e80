// The door for the extensions (nccl_state_access.hpp): the backend's state reached through
// handles, polling and enqueueing, never its insides.
#include "nccl_state_access.hpp"

#include <cstddef>
#include <utility>

#include "commbench/core/op_case.hpp"
#include "nccl_buffers.hpp"
#include "nccl_calls.hpp"
#include "nccl_state.hpp"
#include "nccl_support.hpp"

namespace commbench::nccl {

using detail::check_cuda;
using detail::check_nccl;
using detail::device_buffers;
using detail::enqueue_on_devices;

namespace {

class NcclPending final : public PendingOperation {
 public:
  NcclPending(std::shared_ptr<NcclBackend::State> state, std::vector<cudaEvent_t> events)
      : state_(std::move(state)), events_(std::move(events)) {}
  ~NcclPending() override {
    for (std::size_t i = 0; i < events_.size(); ++i) {
      cudaSetDevice(state_->devices[i].device);
      cudaEventDestroy(events_[i]);
    }
  }
  // A caller polling test() (overlapping compute with the operation) would never call
  // wait(): the asynchronous-error check must happen here too, or a dead peer hangs it.
  bool test() override { return state_->poll(events_, "testing a started operation"); }
  void wait() override { state_->wait_for(events_, "waiting for a started operation"); }

 private:
  std::shared_ptr<NcclBackend::State> state_;
  std::vector<cudaEvent_t> events_;
};

}  // namespace

std::vector<DeviceHandle> device_handles(const NcclBackend::State& state) {
  std::vector<DeviceHandle> handles;
  for (const DeviceContext& d : state.devices) handles.push_back({d.device, d.rank, d.comm, d.stream});
  return handles;
}

NcclBackend::State& state_of(NcclBackend& backend) { return *backend.state_; }

bool poll_events(NcclBackend::State& state, const std::vector<cudaEvent_t>& events, const char* what) {
  return state.poll(events, what);
}

void wait_for_events(NcclBackend::State& state, const std::vector<cudaEvent_t>& events, const char* what) {
  state.wait_for(events, what);
}

std::unique_ptr<PendingOperation> pending_on(std::shared_ptr<NcclBackend::State> state,
                                             const std::vector<cudaStream_t>& streams) {
  std::vector<cudaEvent_t> events;
  for (std::size_t i = 0; i < streams.size(); ++i) {
    check_cuda(cudaSetDevice(state->devices[i].device), "cudaSetDevice");
    cudaEvent_t done = nullptr;
    check_cuda(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), "cudaEventCreate");
    check_cuda(cudaEventRecord(done, streams[i]), "cudaEventRecord");
    events.push_back(done);
  }
  return std::make_unique<NcclPending>(std::move(state), std::move(events));
}

void enqueue_on(const OpCase& c, Buffers& buffers, NcclBackend::State& state,
                const std::vector<cudaStream_t>& streams) {
  std::vector<DeviceContext> devices = state.devices;  // handles only: the copies own nothing
  for (std::size_t i = 0; i < devices.size(); ++i) devices[i].stream = streams[i];
  enqueue_on_devices(c, device_buffers(buffers), state, devices);
}

void check_cuda_call(cudaError_t code, const std::string& what) { check_cuda(code, what); }
void check_nccl_call(ncclResult_t code, const std::string& what, ncclComm_t comm) { check_nccl(code, what, comm); }

}  // namespace commbench::nccl
