#include "commbench/core/output_check.hpp"

#include "commbench/core/collective_descriptor.hpp"

namespace commbench {

CheckSpec check_spec_for(const OpCase& c, int rank, int ranks) {
  CheckSpec spec;
  spec.rule = descriptor_of(c.op).check_rule;
  spec.redop = c.redop;
  spec.root = c.root;
  spec.rank = rank;
  spec.ranks = ranks;
  spec.count = c.shape.count;
  spec.narrow = c.dtype == DataType::float8_e4m3 || c.dtype == DataType::float8_e5m2;
  return spec;
}

std::vector<CheckedPiece> checked_pieces(const OpCase& c, int rank, int ranks, std::uint64_t output_elements) {
  const CheckSpec spec = check_spec_for(c, rank, ranks);
  if (!descriptor_of(c.op).split_per_peer()) return {CheckedPiece{0, output_elements, 0, spec}};
  std::vector<CheckedPiece> pieces;
  const PeerCounts mine = peer_counts(c.distribution, c.shape.send_elements, ranks, rank);
  for (int source = 0; source < ranks; ++source) {
    const auto s = static_cast<std::size_t>(source);
    if (mine.recv_counts[s] == 0) continue;
    // Where `source` packed the piece for this rank in its own send buffer.
    const PeerCounts theirs = peer_counts(c.distribution, c.shape.send_elements, ranks, source);
    CheckedPiece piece{mine.recv_offsets[s], mine.recv_counts[s], theirs.send_offsets[static_cast<std::size_t>(rank)],
                       spec};
    piece.spec.source = source;
    pieces.push_back(piece);
  }
  return pieces;
}

}  // namespace commbench
