// Named streams on the GPU: a stream name maps to one cudaStream_t per GPU this process
// drives, an event to one timed cudaEvent_t per GPU, a wait to cudaStreamWaitEvent. The
// GPU keeps the order; the host only polls (with NCCL's asynchronous-error check) where
// the interface says it blocks or queries.
#include <map>
#include <string>

#include <fmt/format.h>

#include "commbench/backend/stream_set.hpp"
#include "commbench/core/error.hpp"
#include "cuda_resources.hpp"
#include "nccl_peer_exchange.hpp"
#include "spin_compute.hpp"

namespace commbench::nccl {
namespace {

class NcclStreamSet final : public StreamSet {
 public:
  explicit NcclStreamSet(std::shared_ptr<NcclBackend::State> state) : state_(state), compute_(std::move(state)) {
    for (const DeviceHandle& handle : device_handles(*state_)) devices_.push_back(handle.device);
  }

  void enqueue(std::string_view stream, const OpCase& c, Buffers& buffers) override {
    enqueue_on(c, buffers, *state_, streams(stream));
  }

  void enqueue(std::string_view stream, Backend& over, const OpCase& c, Buffers& buffers) override {
    auto* on_gpu = dynamic_cast<NcclBackend*>(&over);
    if (on_gpu == nullptr) throw UsageError("streams: the collective's backend is not the nccl backend");
    NcclBackend::State& state = state_of(*on_gpu);
    // A split keeps the parent's GPUs in the parent's order (NcclBackend::split), so the
    // set's per-device streams line up with the sub-communicator's devices.
    if (device_handles(state).size() != devices_.size())
      throw UsageError("streams: the collective's communicator drives other GPUs than the stream set");
    enqueue_on(c, buffers, state, streams(stream));
  }

  void enqueue(std::string_view stream, PeerExchange& exchange) override {
    auto* on_gpu = dynamic_cast<NcclPeerExchange*>(&exchange);
    if (on_gpu == nullptr) throw UsageError("streams: the peer exchange was not made by the nccl backend");
    on_gpu->enqueue(streams(stream));
  }

  void enqueue_compute(std::string_view stream, double seconds) override {
    compute_.launch(streams(stream), compute_.corrected_request(seconds));
  }

  StreamEvent record(std::string_view stream) override {
    const std::vector<cudaStream_t> targets = streams(stream);
    if (!spare_events_.empty()) {
      // A forgotten event recorded again: no cudaEventCreate on the launch path.
      std::vector<CudaEvent> per_device = std::move(spare_events_.back());
      spare_events_.pop_back();
      for (std::size_t i = 0; i < devices_.size(); ++i) {
        check_cuda_call(cudaSetDevice(devices_[i]), "cudaSetDevice");
        check_cuda_call(cudaEventRecord(per_device[i].get(), targets[i]), "cudaEventRecord");
      }
      events_.push_back(std::move(per_device));
      return StreamEvent{events_.size() - 1};
    }
    std::vector<CudaEvent> per_device;
    for (std::size_t i = 0; i < devices_.size(); ++i)
      per_device.push_back(recorded_event(devices_[i], true, targets[i]));
    events_.push_back(std::move(per_device));
    return StreamEvent{events_.size() - 1};
  }

  void forget_events() override {
    // Every stream drained first: a re-recorded event must not be one a queued wait names.
    synchronize_all();
    for (auto& per_device : events_) spare_events_.push_back(std::move(per_device));
    events_.clear();
  }

  void wait(std::string_view stream, StreamEvent event) override {
    const std::vector<cudaStream_t> targets = streams(stream);
    const std::vector<CudaEvent>& per_device = recorded(event);
    for (std::size_t i = 0; i < devices_.size(); ++i) {
      check_cuda_call(cudaSetDevice(devices_[i]), "cudaSetDevice");
      check_cuda_call(cudaStreamWaitEvent(targets[i], per_device[i].get(), 0), "cudaStreamWaitEvent");
    }
  }

  bool query(StreamEvent event) override {
    return poll_events(*state_, handles_of(recorded(event)), "querying a stream event");
  }

  void synchronize(std::string_view stream) override {
    const std::vector<cudaStream_t> targets = streams(stream);
    std::vector<CudaEvent> ends;
    for (std::size_t i = 0; i < devices_.size(); ++i) ends.push_back(recorded_event(devices_[i], false, targets[i]));
    wait_for_events(*state_, handles_of(ends), "synchronizing a stream");
  }

  void synchronize_all() override {
    for (const auto& [name, per_device] : streams_) synchronize(name);
  }

  double elapsed_seconds(StreamEvent from, StreamEvent to) override {
    if (!query(from) || !query(to)) throw UsageError("elapsed_seconds: an event has not completed (synchronize first)");
    // Events of one device share its clock; the first device speaks for the process.
    float ms = 0;
    check_cuda_call(cudaEventElapsedTime(&ms, recorded(from).front().get(), recorded(to).front().get()),
                    "cudaEventElapsedTime");
    return static_cast<double>(ms) / 1e3;
  }

  ComputeStandIn& compute() override { return compute_; }

 private:
  std::vector<cudaStream_t> streams(std::string_view name) {
    auto found = streams_.find(name);
    if (found == streams_.end()) {
      std::vector<CudaStream> per_device;
      for (const int device : devices_) per_device.push_back(new_stream(device));
      found = streams_.emplace(std::string(name), std::move(per_device)).first;
    }
    return handles_of(found->second);
  }

  const std::vector<CudaEvent>& recorded(StreamEvent event) const {
    if (event.id >= events_.size()) throw UsageError(fmt::format("streams: event {} was never recorded", event.id));
    return events_[event.id];
  }

  std::shared_ptr<NcclBackend::State> state_;
  SpinComputeStandIn compute_;
  std::vector<int> devices_;
  std::map<std::string, std::vector<CudaStream>, std::less<>> streams_;
  std::vector<std::vector<CudaEvent>> events_;
  std::vector<std::vector<CudaEvent>> spare_events_;  // forgotten, ready to record again
};

}  // namespace

std::unique_ptr<StreamSet> NcclBackend::streams() { return std::make_unique<NcclStreamSet>(state_); }

}  // namespace commbench::nccl
