// Which ranks send to which in one round of point-to-point transfers (bench-p2p's pair
// matrices, a pattern's neighbour exchanges). A round is a list of directed transfers; a
// rank may send to and receive from several peers in one round, and a rank that appears in
// no transfer idles. Validated once, so backends only post what it lists.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace commbench {

// `source` sends one message of the round's size to `destination` (communicator ranks).
// source == destination is a loopback through the library: the diagonal of a pair matrix,
// and the one transfer a single GPU can check.
struct Transfer {
  int source = 0;
  int destination = 0;
  bool operator==(const Transfer&) const = default;
};

class PeerRound {
 public:
  // Throws UsageError when a rank is outside [0, ranks) or a transfer is listed twice (its
  // two messages could not be told apart).
  PeerRound(std::vector<Transfer> transfers, int ranks);
  // Every pair exchanging in both directions at once: {(0,1),(2,3)} is 0<->1 and 2<->3.
  static PeerRound both_ways(std::span<const std::pair<int, int>> pairs, int ranks);

  int ranks() const { return ranks_; }
  std::span<const Transfer> transfers() const { return transfers_; }
  // The ranks `rank` receives from, in round order: receive slot k holds the message
  // from incoming(rank)[k].
  std::vector<int> incoming(int rank) const;
  std::vector<int> outgoing(int rank) const;
  bool involves(int rank) const;

 private:
  std::vector<Transfer> transfers_;
  int ranks_;
};

// The byte at `index` of the message `source` sends: differs between sources and along
// the message, so a message from the wrong peer, shifted or stale never passes.
std::uint8_t peer_pattern_byte(int source, std::uint64_t index);
void fill_peer_pattern(std::span<std::uint8_t> message, int source);
// Bytes of `received` that differ from what `source` sent.
std::uint64_t count_peer_pattern_mismatches(std::span<const std::uint8_t> received, int source);

}  // namespace commbench
