// One round of point-to-point transfers (a PeerRound) as a Workload, so the one
// measurement loop times a pair matrix's rounds as it times a collective: warm-up, check,
// fixed count, agreement, watchdog.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "commbench/backend/backend.hpp"
#include "commbench/backend/peer_exchange.hpp"
#include "commbench/runner/workload.hpp"

namespace commbench {

class PeerRoundWorkload final : public Workload {
 public:
  // `label` names the round in messages and timeouts ("round 3 forward, 4MiB").
  PeerRoundWorkload(Backend& backend, PeerRound round, std::uint64_t message_bytes, std::string label);

  std::string describe() const override { return label_; }
  void prepare() override;
  std::uint64_t check() override;  // wrong bytes this rank received
  double time(std::uint64_t iterations) override;
  void release() override { exchange_.reset(); }

 private:
  Backend& backend_;
  PeerRound round_;
  std::uint64_t message_bytes_;
  std::string label_;
  std::unique_ptr<PeerExchange> exchange_;
};

}  // namespace commbench
