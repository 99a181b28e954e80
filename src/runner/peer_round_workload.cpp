#include "commbench/runner/peer_round_workload.hpp"

#include <utility>

namespace commbench {

PeerRoundWorkload::PeerRoundWorkload(Backend& backend, PeerRound round, std::uint64_t message_bytes, std::string label)
    : backend_(backend), round_(std::move(round)), message_bytes_(message_bytes), label_(std::move(label)) {}

void PeerRoundWorkload::prepare() {
  if (!exchange_) exchange_ = backend_.peer_exchange(round_, message_bytes_);
}

std::uint64_t PeerRoundWorkload::check() {
  exchange_->run_single();
  return exchange_->count_wrong();
}

double PeerRoundWorkload::time(std::uint64_t iterations) { return exchange_->time_rounds(iterations); }

}  // namespace commbench
