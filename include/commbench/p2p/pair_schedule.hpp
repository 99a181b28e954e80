// Which ranks (or nodes) exchange in which round of a pair matrix: rounds of disjoint
// pairs, so every pair of a round runs at once without two sharing a rank's link. Pure
// functions: bench-p2p measures what they list, and bench-validate's plan (pairing
// every node with fresh partners) is built from the same rounds.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "commbench/backend/peer_round.hpp"

namespace commbench {

enum class PairSchedule {
  all_pairs,  // every unordered pair once (circle method)
  ring,       // each rank with its next, n mod n
  random,     // K random perfect matchings
};

std::string_view name_of(PairSchedule schedule);
// "all-pairs", "ring" or "random"; UsageError naming `flag` otherwise.
PairSchedule parse_pair_schedule(std::string_view text, std::string_view flag);

// An unordered pair, first < second.
using RankPair = std::pair<int, int>;
using PairRound = std::vector<RankPair>;

// The rounds of `schedule` over `ranks` ranks; no rank appears twice in a round.
// - all_pairs: ranks−1 rounds of ranks/2 pairs for an even count; an odd count has one
//   rank idle in each round and needs `ranks` rounds of (ranks−1)/2 pairs (fewer rounds
//   cannot hold its ranks·(ranks−1)/2 pairs). Every unordered pair exactly once.
// - ring: the pairs (i, i+1 mod ranks), each once: 2 rounds for an even count, 3 for an
//   odd one (the pair that closes the ring shares a rank with both neighbours), 1 for 2.
// - random: `rounds` rounds, each a perfect matching drawn from `seed` (one rank idle per
//   round for an odd count); a pair may repeat across rounds. Same seed, same rounds.
// 0 or 1 rank: no rounds. UsageError for a negative count, or random without rounds.
std::vector<PairRound> pair_rounds(PairSchedule schedule, int ranks, int rounds = 0, std::uint64_t seed = 1);

// Round `round` of the all-pairs schedule alone (0 <= round < ranks−1, or < ranks for an
// odd count; empty outside), without building the others: bench-validate takes a few
// rounds of it at thousands of nodes.
PairRound circle_round(int ranks, int round);

// One direction of a measurement: `forward` sends first → second, `backward` second →
// first, `both` both at once (the bidirectional figure).
enum class PairDirection { forward, backward, both };
std::string_view name_of(PairDirection direction);

// The transfers to time for one pair round. One-way (both_ways false): two rounds, every
// pair's forward transfers, then every pair's backward ones, so each ordered pair is
// measured once on its own. Both ways: one round with every pair sending both directions.
struct DirectedRound {
  PairDirection direction;
  PeerRound transfers;
};
std::vector<DirectedRound> directed_rounds(const PairRound& pairs, bool both_ways, int ranks);

}  // namespace commbench
