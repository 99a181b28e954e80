#include "commbench/p2p/pair_schedule.hpp"

#include <algorithm>
#include <array>
#include <numeric>
#include <random>
#include <string>

#include <fmt/format.h>

#include "commbench/core/error.hpp"
#include "commbench/core/name_lookup.hpp"

namespace commbench {
namespace {

// As --schedule takes them and reports print them.
using NamedSchedule = detail::NamedValue<PairSchedule>;
constexpr std::array kScheduleNames{NamedSchedule{"all-pairs", PairSchedule::all_pairs},
                                    NamedSchedule{"ring", PairSchedule::ring},
                                    NamedSchedule{"random", PairSchedule::random}};

RankPair ordered(int a, int b) { return a < b ? RankPair{a, b} : RankPair{b, a}; }

std::vector<PairRound> circle_rounds(int ranks) {
  std::vector<PairRound> rounds;
  const int count = ranks % 2 == 0 ? ranks - 1 : ranks;
  rounds.reserve(static_cast<std::size_t>(count));
  for (int round = 0; round < count; ++round) rounds.push_back(circle_round(ranks, round));
  return rounds;
}

std::vector<PairRound> ring_rounds(int ranks) {
  if (ranks == 2) return {{{0, 1}}};
  // Pairs (i, i+1) for even i, then odd i; an odd count's closing pair (ranks−1, 0)
  // meets rank 0 (in the first round) and rank ranks−1 (in the second): a third round.
  std::vector<PairRound> rounds(ranks % 2 == 0 ? 2 : 3);
  for (int i = 0; i + 1 < ranks; ++i) rounds[static_cast<std::size_t>(i % 2)].push_back({i, i + 1});
  if (ranks % 2 == 0)
    rounds[1].push_back(ordered(ranks - 1, 0));
  else
    rounds[2].push_back(ordered(ranks - 1, 0));
  for (PairRound& round : rounds) std::sort(round.begin(), round.end());
  return rounds;
}

std::vector<PairRound> random_rounds(int ranks, int count, std::uint64_t seed) {
  std::mt19937_64 generator(seed);
  std::vector<int> order(static_cast<std::size_t>(ranks));
  std::vector<PairRound> rounds;
  for (int round = 0; round < count; ++round) {
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), generator);
    PairRound pairs;
    for (std::size_t i = 0; i + 1 < order.size(); i += 2) pairs.push_back(ordered(order[i], order[i + 1]));
    std::sort(pairs.begin(), pairs.end());
    rounds.push_back(std::move(pairs));
  }
  return rounds;
}

}  // namespace

// Circle method: member slots−1 stays put while the others rotate one place per round; in
// each round position k meets position slots−1−k. An odd count makes the fixed member a
// phantom (number `ranks`), whose partner idles that round.
PairRound circle_round(int ranks, int round) {
  const int slots = ranks % 2 == 0 ? ranks : ranks + 1;
  if (ranks < 2 || round < 0 || round >= slots - 1) return {};
  // Position 0 holds the fixed member slots−1; position p > 0 holds (round + p − 1) mod (slots − 1).
  const auto member = [&](int position) { return position == 0 ? slots - 1 : (round + position - 1) % (slots - 1); };
  PairRound pairs;
  pairs.reserve(static_cast<std::size_t>(slots / 2));
  for (int position = 0; position < slots / 2; ++position) {
    const int a = member(position), b = member(slots - 1 - position);
    if (a == ranks || b == ranks) continue;  // the phantom's partner idles
    pairs.push_back(ordered(a, b));
  }
  std::sort(pairs.begin(), pairs.end());
  return pairs;
}

std::string_view name_of(PairSchedule schedule) { return detail::name_in<PairSchedule>(kScheduleNames, schedule); }

PairSchedule parse_pair_schedule(std::string_view text, std::string_view flag) {
  if (const std::optional<PairSchedule> schedule = detail::value_named<PairSchedule>(kScheduleNames, text))
    return *schedule;
  throw UsageError(std::string(flag) + ": '" + excerpt(std::string(text)) +
                   "' is not a schedule (all-pairs, ring or random)");
}

std::vector<PairRound> pair_rounds(PairSchedule schedule, int ranks, int rounds, std::uint64_t seed) {
  if (ranks < 0) throw UsageError(fmt::format("pair schedule: {} ranks", ranks));
  if (schedule == PairSchedule::random && rounds < 1)
    throw UsageError(fmt::format("--rounds: the random schedule needs at least 1 round (got {})", rounds));
  if (ranks < 2) return {};
  switch (schedule) {
    case PairSchedule::all_pairs: return circle_rounds(ranks);
    case PairSchedule::ring: return ring_rounds(ranks);
    case PairSchedule::random: return random_rounds(ranks, rounds, seed);
  }
  return {};
}

std::string_view name_of(PairDirection direction) {
  using Named = detail::NamedValue<PairDirection>;
  static constexpr std::array kNames{Named{"forward", PairDirection::forward},
                                     Named{"backward", PairDirection::backward}, Named{"both", PairDirection::both}};
  return detail::name_in<PairDirection>(kNames, direction);
}

std::vector<DirectedRound> directed_rounds(const PairRound& pairs, bool both_ways, int ranks) {
  if (both_ways) return {DirectedRound{PairDirection::both, PeerRound::both_ways(pairs, ranks)}};
  std::vector<Transfer> forward, backward;
  for (const auto& [first, second] : pairs) {
    forward.push_back({first, second});
    backward.push_back({second, first});
  }
  std::vector<DirectedRound> directed;
  directed.push_back({PairDirection::forward, PeerRound(std::move(forward), ranks)});
  directed.push_back({PairDirection::backward, PeerRound(std::move(backward), ranks)});
  return directed;
}

}  // namespace commbench
