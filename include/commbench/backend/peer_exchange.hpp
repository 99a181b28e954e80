// Point-to-point transfers along one PeerRound, with the buffers they need: what bench-p2p
// times for each pair of GPUs and what a pattern's neighbour exchange runs. Made by
// Backend::peer_exchange(); ranks the round leaves out hold no buffers and return at once.
#pragma once

#include <cstdint>
#include <memory>

#include "commbench/backend/backend.hpp"
#include "commbench/backend/peer_round.hpp"

namespace commbench {

class PeerExchange {
 public:
  virtual ~PeerExchange() = default;
  PeerExchange() = default;
  PeerExchange(const PeerExchange&) = delete;
  PeerExchange& operator=(const PeerExchange&) = delete;

  virtual const PeerRound& round() const = 0;
  virtual std::uint64_t message_bytes() const = 0;

  // Correctness: makes every receive slot stale, runs one round and waits for it.
  virtual void run_single() = 0;
  // Bytes this rank received wrong in the last round (0 on a rank that receives nothing).
  virtual std::uint64_t count_wrong() = 0;
  // Runs `iterations` rounds back to back and returns this rank's elapsed seconds (0 on
  // an idle rank, which posts nothing).
  virtual double time_rounds(std::uint64_t iterations) = 0;
  // Starts one round and returns at once, so compute can overlap it.
  virtual std::unique_ptr<PendingOperation> start() = 0;
  // Damages one received byte of this rank (tests prove the check catches it); no-op on
  // a rank that receives nothing.
  virtual void corrupt_received() = 0;
};

}  // namespace commbench
