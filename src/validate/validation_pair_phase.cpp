// The pair phase of the validation plan: node pairs in a fixed number of rounds, a pair
// below the expected figure re-tested with fresh partners, and the verdicts on nodes and
// links that follow.

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "commbench/core/interrupted.hpp"
#include "commbench/core/profile_range.hpp"
#include "commbench/core/statistics.hpp"
#include "plan_run.hpp"

namespace commbench::plan_detail {

std::vector<PairResult> PlanRun::measure_round(const PairRound& round, const std::string& phase) {
  const int index = round_index_++;
  const ProfileRange range([&] { return fmt::format("pair round {} ({}, {} pairs)", index, phase, round.size()); });
  const std::vector<double> gbps = probe_.measure_pairs(round);
  const ReadingCuts cuts = probe_.last_cuts();
  std::vector<PairResult> results;
  for (std::size_t i = 0; i < round.size(); ++i) {
    PairResult result{round[i].first, round[i].second, gbps[i], false, phase, index};
    result.cut_short = i < cuts.cut_short.size() && cuts.cut_short[i];
    result.slow = result.cut_short || (outcome_.pair_expected_gbps > 0 && result.gbps < outcome_.pair_expected_gbps);
    measured_.insert(round[i]);
    results.push_back(result);
    outcome_.pairs.push_back(result);
  }
  return results;
}

void PlanRun::pair_phase() {
  const int nodes = node_count();
  if (nodes < 2) {
    outcome_.notes.push_back("a single node: no pairs between nodes to measure");
    return;
  }
  std::vector<PairResult> first_results;
  probe_.expect({settings_.expect.pair_gbps.value_or(0), 0});
  const std::vector<PairRound> rounds = validation_pair_rounds(nodes, settings_.pair_rounds, settings_.seed);
  try {
    for (std::size_t r = 0; r < rounds.size(); ++r) {
      require_time(fmt::format("pair round {} of {}", r + 1, rounds.size()));
      const std::vector<PairResult> results = measure_round(rounds[r], "pairs");
      first_results.insert(first_results.end(), results.begin(), results.end());
      ++outcome_.pair_rounds;
    }
  } catch (const TimeUp&) {
    set_pair_reference(first_results);
    note_unconfirmed(first_results);
    throw;
  }
  set_pair_reference(first_results);
  if (nodes == 2 && !settings_.expect.pair_gbps) {
    outcome_.notes.push_back(
        "two nodes: their one pair is its own median; give an expected figure (--expect) "
        "to judge it");
    return;
  }
  resolve_suspects(first_results, "re-test");
}

void PlanRun::set_pair_reference(std::vector<PairResult>& results) {
  std::vector<double> measured;
  for (const PairResult& result : results) measured.push_back(result.gbps);
  outcome_.pair_reference_gbps = settings_.expect.pair_gbps.value_or(median_of(measured));
  outcome_.pair_expected_gbps = settings_.expect.fraction * outcome_.pair_reference_gbps;
  for (PairResult& result : results) result.slow = result.cut_short || result.gbps < outcome_.pair_expected_gbps;
  for (PairResult& result : outcome_.pairs) result.slow = result.cut_short || result.gbps < outcome_.pair_expected_gbps;
  probe_.expect({budget_pair_gbps(results), 0});
}

double PlanRun::budget_pair_gbps(const std::vector<PairResult>& results) const {
  if (settings_.expect.pair_gbps) return *settings_.expect.pair_gbps;
  // Readings cut short are left out: with one slow node of 4, half the first readings are
  // its own, and their median with the rest would give its re-tests twice the time.
  std::vector<double> within_budget;
  for (const PairResult& result : results)
    if (!result.cut_short) within_budget.push_back(result.gbps);
  return within_budget.empty() ? outcome_.pair_reference_gbps : median_of(within_budget);
}

void PlanRun::note_unconfirmed(const std::vector<PairResult>& results) {
  for (const PairResult& result : results)
    if (result.slow)
      outcome_.notes.push_back(fmt::format("pair {} - {} read {} (expected >= {}); not re-tested before the time limit",
                                           name(result.first), name(result.second), gbps_text(result.gbps),
                                           gbps_text(outcome_.pair_expected_gbps)));
}

void PlanRun::resolve_suspects(const std::vector<PairResult>& results, const std::string& phase) {
  std::map<int, std::vector<const PairResult*>> by_node;
  for (const PairResult& result : results) {
    by_node[result.first].push_back(&result);
    by_node[result.second].push_back(&result);
  }
  std::set<int> suspect_nodes;
  for (const auto& [node, pairs] : by_node) {
    const auto slow = std::count_if(pairs.begin(), pairs.end(), [](const PairResult* p) { return p->slow; });
    if (faulty_.count(node) == 0 && slow * 2 > static_cast<long>(pairs.size())) suspect_nodes.insert(node);
  }
  std::vector<RankPair> suspect_links;
  for (const PairResult& result : results) {
    if (!result.slow || suspect_nodes.count(result.first) || suspect_nodes.count(result.second)) continue;
    if (faulty_.count(result.first) || faulty_.count(result.second)) continue;  // explained already
    suspect_links.push_back({result.first, result.second});
  }
  if (suspect_nodes.empty() && suspect_links.empty()) return;

  // Fresh partners come from nodes that are neither suspect nor faulty, spread evenly.
  std::set<int> involved(suspect_nodes.begin(), suspect_nodes.end());
  for (const RankPair& link : suspect_links) involved.insert({link.first, link.second});
  std::vector<int> helpers;
  for (int node = 0; node < node_count(); ++node)
    if (!involved.count(node) && !faulty_.count(node)) helpers.push_back(node);
  std::map<int, int> helper_use;
  const auto fresh_partner = [&](int node, std::set<int>& taken) -> std::optional<int> {
    std::optional<int> best;
    for (const int helper : helpers) {
      if (taken.count(helper) || measured_.count(ordered(node, helper))) continue;
      if (!best || helper_use[helper] < helper_use[*best]) best = helper;
    }
    if (best) {
      ++helper_use[*best];
      taken.insert(*best);
    }
    return best;
  };
  std::vector<RankPair> demands;
  std::map<int, std::vector<RankPair>> fresh_pairs;  // per suspect end: its fresh pairs
  for (const int node : suspect_nodes) {
    std::set<int> taken;
    for (int i = 0; i < 2; ++i)
      if (const auto helper = fresh_partner(node, taken)) fresh_pairs[node].push_back(ordered(node, *helper));
  }
  for (const RankPair& link : suspect_links) {
    demands.push_back(link);
    for (const int end : {link.first, link.second}) {
      if (fresh_pairs.count(end)) continue;
      std::set<int> taken;
      if (const auto helper = fresh_partner(end, taken)) fresh_pairs[end].push_back(ordered(end, *helper));
    }
  }
  for (const auto& [node, pairs] : fresh_pairs) demands.insert(demands.end(), pairs.begin(), pairs.end());
  // A suspect no fresh partner is left for (every pair of a small cluster was measured)
  // has its own pairs measured again: one reading must not fail a node.
  std::map<int, std::vector<RankPair>> again_pairs;
  for (const int node : suspect_nodes) {
    if (fresh_pairs.count(node)) continue;
    for (const PairResult* result : by_node[node]) again_pairs[node].push_back({result->first, result->second});
  }
  for (const auto& [node, pairs] : again_pairs) demands.insert(demands.end(), pairs.begin(), pairs.end());
  std::sort(demands.begin(), demands.end());
  demands.erase(std::unique(demands.begin(), demands.end()), demands.end());

  std::map<RankPair, PairResult> retested;
  try {
    for (const PairRound& round : pack_into_rounds(demands)) {
      require_time(fmt::format("{} round {}", phase, outcome_.retest_rounds + 1));
      for (const PairResult& result : measure_round(round, phase)) retested[{result.first, result.second}] = result;
      ++outcome_.retest_rounds;
    }
    measure_crowded_links_alone(suspect_links, retested, phase);
  } catch (const TimeUp&) {
    note_unconfirmed(results);
    throw;
  }
  decide_nodes(suspect_nodes, by_node, fresh_pairs, again_pairs, retested);
  decide_links(suspect_links, fresh_pairs, retested);
}

void PlanRun::measure_crowded_links_alone(const std::vector<RankPair>& links, std::map<RankPair, PairResult>& retested,
                                          const std::string& phase) {
  std::vector<RankPair> crowded;
  for (const RankPair& link : links) {
    const PairResult& again = retested.at(link);
    const bool beside_another = std::any_of(links.begin(), links.end(), [&](const RankPair& other) {
      const PairResult& other_again = retested.at(other);
      return other != link && other_again.slow && other_again.round == again.round;
    });
    if (again.slow && beside_another) crowded.push_back(link);
  }
  for (const RankPair& link : crowded) {
    require_time(fmt::format("{} round {}", phase, outcome_.retest_rounds + 1));
    retested[link] = measure_round({link}, phase + " alone").front();
    ++outcome_.retest_rounds;
  }
}

void PlanRun::decide_nodes(const std::set<int>& suspects, std::map<int, std::vector<const PairResult*>>& by_node,
                           const std::map<int, std::vector<RankPair>>& fresh_pairs,
                           const std::map<int, std::vector<RankPair>>& again_pairs,
                           const std::map<RankPair, PairResult>& retested) {
  for (const int node : suspects) {
    std::vector<double> slow_figures;
    int partners = 0;
    for (const PairResult* result : by_node[node]) {
      ++partners;
      if (result->slow) slow_figures.push_back(result->gbps);
    }
    int fresh = 0, fresh_slow = 0;
    if (const auto found = fresh_pairs.find(node); found != fresh_pairs.end()) {
      for (const RankPair& pair : found->second) {
        const PairResult& result = retested.at(pair);
        ++fresh;
        ++partners;
        if (result.slow) {
          ++fresh_slow;
          slow_figures.push_back(result.gbps);
        }
      }
    }
    bool slow_again = true;
    if (const auto found = again_pairs.find(node); found != again_pairs.end())
      slow_again = std::all_of(found->second.begin(), found->second.end(),
                               [&](const RankPair& pair) { return retested.at(pair).slow; });
    const bool confirmed =
        fresh > 0 ? fresh_slow == fresh
                  : partners >= 2 && slow_again && slow_figures.size() == static_cast<std::size_t>(partners);
    if (confirmed) {
      add_fault(FaultKind::node, {node},
                fmt::format("slow with {} of {} partners{}: median {}, expected >= {}{}{}", slow_figures.size(),
                            partners, fresh > 0 ? " (fresh ones on re-test included)" : "",
                            gbps_text(median_of(slow_figures)), gbps_text(outcome_.pair_expected_gbps),
                            cut_short_text(node, node), nics_text({node})));
    } else if (fresh > 0) {
      outcome_.notes.push_back(
          fmt::format("{}: slow with {} of {} partners, but fast with {} of {} fresh partners on "
                      "re-test: not reported",
                      name(node), slow_figures.size(), partners, fresh - fresh_slow, fresh));
    } else {
      // Measured again (no fresh partner): a pair slow both times is a link nobody can
      // tell from a node; one fast the second time is only a note.
      for (const PairResult* result : by_node[node]) {
        if (!result->slow || faulty_.count(result->first == node ? result->second : result->first)) continue;
        const auto again = retested.find({result->first, result->second});
        if (again == retested.end() || again->second.slow) {
          undecided_links_.insert({result->first, result->second});
        } else {
          outcome_.notes.push_back(fmt::format("pair {} - {} was slow once, {} measured again: not reported",
                                               name(result->first), name(result->second),
                                               gbps_text(again->second.gbps)));
        }
      }
    }
  }
  for (const RankPair& link : undecided_links_) {
    if (faulty_.count(link.first) || faulty_.count(link.second)) continue;
    add_fault(FaultKind::link, {link.first, link.second},
              fmt::format("pair {} - {} slow (expected >= {}); no third node was free to tell a slow node from a "
                          "slow link{}{}",
                          name(link.first), name(link.second), gbps_text(outcome_.pair_expected_gbps),
                          cut_short_text(link.first, link.second), nics_text({link.first, link.second})));
  }
  undecided_links_.clear();
}

std::string PlanRun::nics_text(std::initializer_list<int> nodes) const {
  std::string text;
  for (const int node : nodes) {
    const std::string nics = probe_.nics_of(node);
    if (!nics.empty()) text += fmt::format("{} {} {}", text.empty() ? "; NIC:" : ",", name(node), nics);
  }
  return text;
}

std::string PlanRun::cut_short_text(int a, int b) const {
  int cut = 0, readings = 0;
  for (const PairResult& result : outcome_.pairs) {
    const bool joins = a == b ? (result.first == a || result.second == a)
                              : RankPair{result.first, result.second} == ordered(a, b);
    if (!joins) continue;
    ++readings;
    if (result.cut_short) ++cut;
  }
  if (cut == 0) return "";
  return fmt::format("; {} of {} readings cut short at their time budget", cut, readings);
}

std::string PlanRun::readings_text(const RankPair& pair) const {
  std::string first, retest, alone;
  for (const PairResult& result : outcome_.pairs) {
    if (RankPair{result.first, result.second} != pair) continue;
    std::string& reading = result.phase.ends_with(" alone")    ? alone
                           : result.phase.ends_with("re-test") ? retest
                                                               : first;
    reading = gbps_text(result.gbps);
  }
  std::string text = first.empty() ? retest + " on re-test" : first + " and " + retest + " on re-test";
  return alone.empty() ? text : text + ", " + alone + " alone";
}

void PlanRun::decide_links(const std::vector<RankPair>& links, const std::map<int, std::vector<RankPair>>& fresh_pairs,
                           const std::map<RankPair, PairResult>& retested) {
  for (const RankPair& link : links) {
    if (faulty_.count(link.first) || faulty_.count(link.second)) continue;
    const PairResult& again = retested.at(link);
    if (!again.slow) {
      outcome_.notes.push_back(fmt::format("pair {} - {} was slow once, {} on re-test: not reported", name(link.first),
                                           name(link.second), gbps_text(again.gbps)));
      continue;
    }
    std::vector<int> slow_ends;
    for (const int end : {link.first, link.second}) {
      const auto found = fresh_pairs.find(end);
      if (found == fresh_pairs.end()) continue;
      const bool all_slow = std::all_of(found->second.begin(), found->second.end(),
                                        [&](const RankPair& pair) { return retested.at(pair).slow; });
      if (all_slow) slow_ends.push_back(end);
    }
    for (const int end : slow_ends)
      add_fault(FaultKind::node, {end},
                fmt::format("slow with {} and with a fresh partner on re-test, expected >= {}{}{}",
                            name(end == link.first ? link.second : link.first), gbps_text(outcome_.pair_expected_gbps),
                            cut_short_text(end, end), nics_text({end})));
    if (!slow_ends.empty()) continue;
    add_fault(FaultKind::link, {link.first, link.second},
              fmt::format("{}, expected >= {}; both ends are fast with other partners{}{}", readings_text(link),
                          gbps_text(outcome_.pair_expected_gbps), cut_short_text(link.first, link.second),
                          nics_text({link.first, link.second})));
  }
}

}  // namespace commbench::plan_detail
