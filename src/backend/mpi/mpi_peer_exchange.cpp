// Peer-addressed send/recv on host memory: each round posts this rank's MPI_Irecv and
// MPI_Isend calls (receives first, so eager messages land in posted buffers) and completes
// them with one MPI_Waitall, so every transfer of a round is in flight at once.
#include <climits>
#include <cstring>
#include <new>
#include <vector>

#include <fmt/format.h>

#include "commbench/backend/collective_try.hpp"
#include "commbench/backend/mpi/mpi_backend.hpp"
#include "commbench/backend/mpi/mpi_pending.hpp"
#include "commbench/backend/peer_exchange.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/size.hpp"

namespace commbench::mpi {
namespace {

constexpr int kPeerTag = 7302;  // apart from the ring sendrecv's tag
constexpr std::uint8_t kStaleByte = 0xA5;

class MpiPeerExchange final : public PeerExchange {
 public:
  MpiPeerExchange(MPI_Comm comm, int rank, PeerRound round, std::uint64_t message_bytes)
      : comm_(comm),
        round_(std::move(round)),
        message_bytes_(message_bytes),
        sources_(round_.incoming(rank)),
        destinations_(round_.outgoing(rank)),
        count_(static_cast<int>(message_bytes)),
        sent_(destinations_.empty() ? 0 : message_bytes),
        received_(sources_.size() * message_bytes) {
    // One message for every destination: every peer is sent the same bytes, the pattern
    // of this rank, so a receiver can tell whose message it got.
    fill_peer_pattern(sent_, rank);
  }

  const PeerRound& round() const override { return round_; }
  std::uint64_t message_bytes() const override { return message_bytes_; }

  void run_single() override {
    // A rank that receives nothing has no buffer (memset of a null pointer is undefined,
    // even for 0 bytes).
    if (!received_.empty()) std::memset(received_.data(), kStaleByte, received_.size());
    start()->wait();
  }

  std::uint64_t count_wrong() override {
    std::uint64_t wrong = 0;
    for (std::size_t slot = 0; slot < sources_.size(); ++slot)
      wrong += count_peer_pattern_mismatches(std::span(received_).subspan(slot * message_bytes_, message_bytes_),
                                             sources_[slot]);
    return wrong;
  }

  void corrupt_received() override {
    if (!received_.empty()) received_.front() ^= 0xFF;
  }

  double time_rounds(std::uint64_t iterations) override {
    if (sources_.empty() && destinations_.empty()) return 0;
    const double begin = MPI_Wtime();
    for (std::uint64_t i = 0; i < iterations; ++i) start()->wait();
    return MPI_Wtime() - begin;
  }

  std::unique_ptr<PendingOperation> start() override {
    std::vector<MPI_Request> requests(sources_.size() + destinations_.size(), MPI_REQUEST_NULL);
    for (std::size_t slot = 0; slot < sources_.size(); ++slot)
      check_mpi(MPI_Irecv(received_.data() + slot * message_bytes_, count_, MPI_BYTE, sources_[slot], kPeerTag, comm_,
                          &requests[slot]),
                "MPI_Irecv");
    for (std::size_t i = 0; i < destinations_.size(); ++i)
      check_mpi(
          MPI_Isend(sent_.data(), count_, MPI_BYTE, destinations_[i], kPeerTag, comm_, &requests[sources_.size() + i]),
          "MPI_Isend");
    return std::make_unique<MpiPending>(std::move(requests));
  }

 private:
  MPI_Comm comm_;
  PeerRound round_;
  std::uint64_t message_bytes_;
  std::vector<int> sources_;  // receive slot k holds the message from sources_[k]
  std::vector<int> destinations_;
  int count_;
  std::vector<std::uint8_t> sent_;
  std::vector<std::uint8_t> received_;
};

}  // namespace

std::unique_ptr<PeerExchange> MpiBackend::peer_exchange(const PeerRound& round, std::uint64_t message_bytes) {
  if (round.ranks() != ranks())
    throw UsageError(fmt::format("peer round over {} ranks on a communicator of {}", round.ranks(), ranks()));
  if (message_bytes > static_cast<std::uint64_t>(INT_MAX))
    throw UsageError("peer message of " + format_size(message_bytes) +
                     ": one MPI message carries at most 2^31-1 bytes");
  std::unique_ptr<PeerExchange> exchange;
  collective_try(*group_, [&] {
    try {
      exchange = std::make_unique<MpiPeerExchange>(group_->comm(), group_->rank(), round, message_bytes);
    } catch (const std::bad_alloc&) {
      throw UsageError("peer messages of " + format_size(message_bytes) + ": cannot allocate their buffers on host " +
                       group_->hostname());
    }
  });
  return exchange;
}

}  // namespace commbench::mpi
