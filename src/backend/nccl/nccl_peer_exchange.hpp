// Peer-addressed send/recv on GPU memory: one round is ncclGroupStart, this process's
// ncclRecv and ncclSend calls for every GPU it drives, ncclGroupEnd, so all of a round's
// transfers are in flight at once and NCCL pairs them without deadlock.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "commbench/backend/nccl/nccl_backend.hpp"
#include "commbench/backend/peer_exchange.hpp"
#include "nccl_state_access.hpp"

namespace commbench::nccl {

class NcclPeerExchange final : public PeerExchange {
 public:
  // Allocates and fills this process's buffers; run inside collective_try.
  NcclPeerExchange(std::shared_ptr<NcclBackend::State> state, PeerRound round, std::uint64_t message_bytes);
  ~NcclPeerExchange() override;

  const PeerRound& round() const override { return round_; }
  std::uint64_t message_bytes() const override { return message_bytes_; }
  void run_single() override;
  std::uint64_t count_wrong() override;
  double time_rounds(std::uint64_t iterations) override;
  std::unique_ptr<PendingOperation> start() override;
  void corrupt_received() override;

  // One round on `streams` (one per device); what start() does on the backend's streams
  // and a StreamSet does on a named one.
  void enqueue(const std::vector<cudaStream_t>& streams);

 private:
  struct DeviceSide {
    DeviceHandle handle;
    std::vector<int> sources;  // receive slot k holds the message from sources[k]
    std::vector<int> destinations;
    std::uint8_t* sent = nullptr;      // message_bytes, this rank's pattern
    std::uint8_t* received = nullptr;  // sources.size() x message_bytes
  };
  std::vector<cudaStream_t> own_streams() const;
  bool involved() const;

  std::shared_ptr<NcclBackend::State> state_;
  PeerRound round_;
  std::uint64_t message_bytes_;
  std::vector<DeviceSide> sides_;
};

}  // namespace commbench::nccl
