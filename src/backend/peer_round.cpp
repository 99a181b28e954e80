#include "commbench/backend/peer_round.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "commbench/core/error.hpp"

namespace commbench {
namespace {

std::string describe(const Transfer& transfer) { return fmt::format("{}->{}", transfer.source, transfer.destination); }

}  // namespace

PeerRound::PeerRound(std::vector<Transfer> transfers, int ranks) : transfers_(std::move(transfers)), ranks_(ranks) {
  for (std::size_t i = 0; i < transfers_.size(); ++i) {
    const Transfer& transfer = transfers_[i];
    const auto outside = [ranks](int rank) { return rank < 0 || rank >= ranks; };
    if (outside(transfer.source) || outside(transfer.destination))
      throw UsageError(fmt::format("transfer {}: ranks are 0..{}", describe(transfer), ranks - 1));
    if (std::find(transfers_.begin(), transfers_.begin() + static_cast<std::ptrdiff_t>(i), transfer) !=
        transfers_.begin() + static_cast<std::ptrdiff_t>(i))
      throw UsageError("transfer " + describe(transfer) + " is listed twice in one round");
  }
}

PeerRound PeerRound::both_ways(std::span<const std::pair<int, int>> pairs, int ranks) {
  std::vector<Transfer> transfers;
  for (const auto& [first, second] : pairs) {
    transfers.push_back({first, second});
    transfers.push_back({second, first});
  }
  return PeerRound(std::move(transfers), ranks);
}

std::vector<int> PeerRound::incoming(int rank) const {
  std::vector<int> sources;
  for (const Transfer& transfer : transfers_)
    if (transfer.destination == rank) sources.push_back(transfer.source);
  return sources;
}

std::vector<int> PeerRound::outgoing(int rank) const {
  std::vector<int> destinations;
  for (const Transfer& transfer : transfers_)
    if (transfer.source == rank) destinations.push_back(transfer.destination);
  return destinations;
}

bool PeerRound::involves(int rank) const {
  return std::any_of(transfers_.begin(), transfers_.end(), [rank](const Transfer& transfer) {
    return transfer.source == rank || transfer.destination == rank;
  });
}

std::uint8_t peer_pattern_byte(int source, std::uint64_t index) {
  // A multiplier coprime to 256 walks every byte value along the message; the source
  // shifts the walk, so neighbouring sources differ at every index.
  return static_cast<std::uint8_t>(index * 7 + static_cast<std::uint64_t>(source) * 61 + 1);
}

void fill_peer_pattern(std::span<std::uint8_t> message, int source) {
  for (std::size_t i = 0; i < message.size(); ++i) message[i] = peer_pattern_byte(source, i);
}

std::uint64_t count_peer_pattern_mismatches(std::span<const std::uint8_t> received, int source) {
  std::uint64_t wrong = 0;
  for (std::size_t i = 0; i < received.size(); ++i) wrong += received[i] != peer_pattern_byte(source, i) ? 1 : 0;
  return wrong;
}

}  // namespace commbench
