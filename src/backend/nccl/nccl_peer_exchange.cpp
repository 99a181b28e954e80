#include "nccl_peer_exchange.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "commbench/backend/collective_try.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/size.hpp"
#include "cuda_resources.hpp"

namespace commbench::nccl {
namespace {

constexpr int kStaleByte = 0xA5;

std::uint8_t* device_bytes(std::uint64_t bytes) {
  if (bytes == 0) return nullptr;
  void* memory = nullptr;
  const cudaError_t status = cudaMalloc(&memory, bytes);
  if (status == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    throw UsageError("peer messages: cannot allocate " + format_size(bytes) + " on the GPU");
  }
  check_cuda_call(status, "cudaMalloc");
  return static_cast<std::uint8_t*>(memory);
}

}  // namespace

NcclPeerExchange::NcclPeerExchange(std::shared_ptr<NcclBackend::State> state, PeerRound round,
                                   std::uint64_t message_bytes)
    : state_(std::move(state)), round_(std::move(round)), message_bytes_(message_bytes) {
  for (const DeviceHandle& handle : device_handles(*state_)) {
    // Recorded before allocating, so the destructor frees what was allocated if a later
    // step throws.
    sides_.push_back(DeviceSide{handle, round_.incoming(handle.rank), round_.outgoing(handle.rank)});
    DeviceSide& side = sides_.back();
    check_cuda_call(cudaSetDevice(handle.device), "cudaSetDevice");
    side.sent = device_bytes(side.destinations.empty() ? 0 : message_bytes_);
    side.received = device_bytes(side.sources.size() * message_bytes_);
    if (side.sent != nullptr) {
      std::vector<std::uint8_t> pattern(message_bytes_);
      fill_peer_pattern(pattern, handle.rank);
      check_cuda_call(cudaMemcpy(side.sent, pattern.data(), message_bytes_, cudaMemcpyHostToDevice), "cudaMemcpy");
    }
  }
}

NcclPeerExchange::~NcclPeerExchange() {
  for (const DeviceSide& side : sides_) {
    cudaSetDevice(side.handle.device);
    cudaFree(side.sent);
    cudaFree(side.received);
  }
}

std::vector<cudaStream_t> NcclPeerExchange::own_streams() const {
  std::vector<cudaStream_t> streams;
  for (const DeviceSide& side : sides_) streams.push_back(side.handle.stream);
  return streams;
}

bool NcclPeerExchange::involved() const {
  return std::any_of(sides_.begin(), sides_.end(),
                     [](const DeviceSide& side) { return !side.sources.empty() || !side.destinations.empty(); });
}

void NcclPeerExchange::enqueue(const std::vector<cudaStream_t>& streams) {
  if (!involved()) return;
  check_nccl_call(ncclGroupStart(), "ncclGroupStart");
  for (std::size_t i = 0; i < sides_.size(); ++i) {
    const DeviceSide& side = sides_[i];
    check_cuda_call(cudaSetDevice(side.handle.device), "cudaSetDevice");
    for (std::size_t slot = 0; slot < side.sources.size(); ++slot)
      check_nccl_call(ncclRecv(side.received + slot * message_bytes_, message_bytes_, ncclUint8, side.sources[slot],
                               side.handle.comm, streams[i]),
                      "ncclRecv", side.handle.comm);
    for (const int destination : side.destinations)
      check_nccl_call(ncclSend(side.sent, message_bytes_, ncclUint8, destination, side.handle.comm, streams[i]),
                      "ncclSend", side.handle.comm);
  }
  check_nccl_call(ncclGroupEnd(), "ncclGroupEnd");
}

std::unique_ptr<PendingOperation> NcclPeerExchange::start() {
  enqueue(own_streams());
  return pending_on(state_, own_streams());
}

void NcclPeerExchange::run_single() {
  for (const DeviceSide& side : sides_) {
    if (side.received == nullptr) continue;
    check_cuda_call(cudaSetDevice(side.handle.device), "cudaSetDevice");
    check_cuda_call(
        cudaMemsetAsync(side.received, kStaleByte, side.sources.size() * message_bytes_, side.handle.stream),
        "cudaMemsetAsync");
  }
  start()->wait();
}

std::uint64_t NcclPeerExchange::count_wrong() {
  std::uint64_t wrong = 0;
  std::vector<std::uint8_t> received;
  for (const DeviceSide& side : sides_) {
    if (side.received == nullptr) continue;
    received.resize(side.sources.size() * message_bytes_);
    check_cuda_call(cudaSetDevice(side.handle.device), "cudaSetDevice");
    check_cuda_call(cudaMemcpy(received.data(), side.received, received.size(), cudaMemcpyDeviceToHost), "cudaMemcpy");
    for (std::size_t slot = 0; slot < side.sources.size(); ++slot)
      wrong += count_peer_pattern_mismatches(std::span(received).subspan(slot * message_bytes_, message_bytes_),
                                             side.sources[slot]);
  }
  return wrong;
}

void NcclPeerExchange::corrupt_received() {
  for (const DeviceSide& side : sides_) {
    if (side.received == nullptr || message_bytes_ == 0) continue;
    check_cuda_call(cudaSetDevice(side.handle.device), "cudaSetDevice");
    std::uint8_t first = 0;
    check_cuda_call(cudaMemcpy(&first, side.received, 1, cudaMemcpyDeviceToHost), "cudaMemcpy");
    first ^= 0xFF;
    check_cuda_call(cudaMemcpy(side.received, &first, 1, cudaMemcpyHostToDevice), "cudaMemcpy");
    return;  // one byte of the process, as the MPI backend damages one of the rank
  }
}

double NcclPeerExchange::time_rounds(std::uint64_t iterations) {
  if (!involved()) return 0;
  // Events around the rounds on each GPU; the slowest GPU's span is this process's time.
  std::vector<CudaEvent> begins, ends;
  for (const DeviceSide& side : sides_) begins.push_back(recorded_event(side.handle.device, true, side.handle.stream));
  for (std::uint64_t i = 0; i < iterations; ++i) enqueue(own_streams());
  for (const DeviceSide& side : sides_) ends.push_back(recorded_event(side.handle.device, true, side.handle.stream));
  wait_for_events(*state_, handles_of(ends), "timing peer rounds");
  return slowest_elapsed_seconds(begins, ends);
}

std::unique_ptr<PeerExchange> NcclBackend::peer_exchange(const PeerRound& round, std::uint64_t message_bytes) {
  if (round.ranks() != ranks())
    throw UsageError(fmt::format("peer round over {} ranks on a communicator of {}", round.ranks(), ranks()));
  std::unique_ptr<PeerExchange> exchange;
  collective_try(*group_, [&] { exchange = std::make_unique<NcclPeerExchange>(state_, round, message_bytes); });
  return exchange;
}

}  // namespace commbench::nccl
