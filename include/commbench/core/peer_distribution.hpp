// How alltoallv splits each rank's send buffer over the destination ranks: uneven, as
// Mixture-of-Experts token routing is (rank d hosts expert d; a popular expert receives
// more). Every rank computes every count from the rank indices alone, so no rank has to
// tell another what it sends, and the counts a rank receives are the transpose of what
// the others send (what torch.distributed.all_to_all_single's input/output split sizes
// describe). docs/methodology.md explains the choice of model.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace commbench {

struct PeerDistribution {
  enum class Kind {
    uniform,  // every destination gets the same share: alltoall's exchange
    zipf,     // destination d gets a share proportional to 1 / (d + 1)^skew
    hot,      // destination 0 gets `parameter` of every rank's data, the others share the rest
  };
  Kind kind = Kind::uniform;
  double parameter = 0;  // zipf: the skew exponent (>= 0); hot: the fraction (0..1)

  auto operator<=>(const PeerDistribution&) const = default;
};

// "uniform", "zipf:S" or "hot:F" (case-insensitive). UsageError naming `flag` otherwise.
PeerDistribution parse_peer_distribution(std::string_view text, std::string_view flag);
// The same spelling back: "uniform", "zipf:1.2", "hot:0.5".
std::string to_string(const PeerDistribution& distribution);

// Elements every rank sends to each destination when it sends `elements_per_rank` in
// all: the same split on every rank (all ranks route tokens to the same popular
// experts), so send totals are equal and receive totals differ. Sums to elements_per_rank.
std::vector<std::uint64_t> destination_counts(const PeerDistribution& distribution, std::uint64_t elements_per_rank,
                                              int ranks);

// One rank's view of the exchange, in elements: what it sends to and receives from each
// peer, and where each piece starts in its send or receive buffer (pieces are packed in
// rank order, as MPI_Alltoallv displacements and PyTorch's split sizes lay them out).
struct PeerCounts {
  std::vector<std::uint64_t> send_counts;
  std::vector<std::uint64_t> send_offsets;
  std::vector<std::uint64_t> recv_counts;
  std::vector<std::uint64_t> recv_offsets;

  std::uint64_t received() const;  // elements this rank receives in all
};

PeerCounts peer_counts(const PeerDistribution& distribution, std::uint64_t elements_per_rank, int ranks, int rank);

// The most any rank receives (the receive buffer every rank allocates).
std::uint64_t most_received(const PeerDistribution& distribution, std::uint64_t elements_per_rank, int ranks);

}  // namespace commbench
