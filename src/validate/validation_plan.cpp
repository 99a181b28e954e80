#include "commbench/validate/validation_plan.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include <fmt/format.h>

#include "commbench/core/interrupted.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/core/profile_range.hpp"
#include "commbench/core/statistics.hpp"
#include "commbench/validate/hostlist.hpp"

namespace commbench {
namespace {

// Thrown when the time limit is reached before a round or step: the plan reports what it
// has measured so far.
struct TimeUp {
  std::string next;
};

std::string gbps_text(double gbps) { return significant_text(gbps, 3) + " GB/s"; }

RankPair ordered(int a, int b) { return a < b ? RankPair{a, b} : RankPair{b, a}; }

// Packs pairs into rounds in which no node appears twice (first fit, in the given order).
std::vector<PairRound> pack_into_rounds(const std::vector<RankPair>& pairs) {
  std::vector<PairRound> rounds;
  std::vector<std::set<int>> busy;
  for (const RankPair& pair : pairs) {
    std::size_t r = 0;
    while (r < rounds.size() && (busy[r].count(pair.first) || busy[r].count(pair.second))) ++r;
    if (r == rounds.size()) {
      rounds.emplace_back();
      busy.emplace_back();
    }
    rounds[r].push_back(pair);
    busy[r].insert({pair.first, pair.second});
  }
  return rounds;
}

class PlanRun {
 public:
  PlanRun(ClusterProbe& probe, const PlanSettings& settings) : probe_(probe), settings_(settings) {}

  ValidationOutcome run() {
    const int nodes = probe_.nodes();
    for (int node = 0; node < nodes; ++node) outcome_.node_names.push_back(probe_.node_name(node));
    try {
      local_checks();
      intra_node_collectives();
      pair_phase();
      group_phase();
    } catch (const TimeUp& stop) {
      outcome_.complete = false;
      outcome_.stopped_before = stop.next;
    } catch (const Interrupted& stop) {
      // Every rank agreed on the signal inside a measurement: all of them keep what was
      // judged so far and report it, as a sweep keeps its rows.
      outcome_.complete = false;
      outcome_.stopped_before = phase_;
      outcome_.interrupted_by = stop.signal_number();
    }
    outcome_.elapsed_seconds = probe_.elapsed_seconds();
    return std::move(outcome_);
  }

 private:
  int node_count() const { return static_cast<int>(outcome_.node_names.size()); }
  const std::string& name(int node) const { return outcome_.node_names[static_cast<std::size_t>(node)]; }


  // Called as each phase begins, with its name: what a time limit or a signal cut off.
  void require_time(const std::string& next) {
    phase_ = next;
    if (settings_.time_limit_seconds > 0 && probe_.elapsed_seconds() >= settings_.time_limit_seconds)
      throw TimeUp{next};
  }

  void add_fault(FaultKind kind, std::vector<int> nodes, std::string reason) {
    std::sort(nodes.begin(), nodes.end());
    if (kind == FaultKind::node) faulty_.insert(nodes.front());
    outcome_.faults.push_back({kind, std::move(nodes), std::move(reason)});
  }

  void local_checks() {
    require_time("the node-local checks");
    const ProfileRange range("local checks");
    outcome_.local_findings = probe_.local_findings();
    for (int node = 0; node < node_count(); ++node) {
      const auto& found = outcome_.local_findings[static_cast<std::size_t>(node)];
      if (found.empty()) continue;
      std::string reason = "local check: ";
      for (std::size_t i = 0; i < found.size(); ++i) reason += (i ? "; " : "") + found[i];
      add_fault(FaultKind::node, {node}, reason);
    }
  }

  // A node below the expected figure is measured again (all nodes at once: it is one
  // step) and fails only if it is below it both times.
  void intra_node_collectives() {
    require_time("the intra-node collectives");
    std::optional<ProfileRange> range(std::in_place, "intra-node collectives");
    outcome_.intra_busbw = probe_.intra_node_busbw();
    range.reset();
    outcome_.intra_measurements = 1;
    std::vector<double> measured;
    for (const auto& busbw : outcome_.intra_busbw)
      if (busbw) measured.push_back(*busbw);
    if (measured.empty()) return;
    const double reference = settings_.expect.intra_busbw_gbps.value_or(median_of(measured));
    outcome_.intra_expected_gbps = settings_.expect.fraction * reference;
    const auto below = [&](const std::optional<double>& busbw) { return busbw && *busbw < outcome_.intra_expected_gbps; };
    if (std::none_of(outcome_.intra_busbw.begin(), outcome_.intra_busbw.end(), below)) return;
    require_time("measuring the intra-node collectives again");
    range.emplace("intra-node collectives again");
    const std::vector<std::optional<double>> again = probe_.intra_node_busbw();
    range.reset();
    outcome_.intra_measurements = 2;
    for (int node = 0; node < node_count(); ++node) {
      const auto& first = outcome_.intra_busbw[static_cast<std::size_t>(node)];
      const auto& second = again[static_cast<std::size_t>(node)];
      if (!below(first)) continue;
      if (!below(second)) {
        outcome_.notes.push_back(fmt::format("{}: intra-node collective {} once, {} measured again: not reported",
                                             name(node), gbps_text(*first), gbps_text(second.value_or(0))));
        continue;
      }
      add_fault(FaultKind::node, {node},
                fmt::format("intra-node collective {} and {} measured again, expected >= {}", gbps_text(*first),
                            gbps_text(*second), gbps_text(outcome_.intra_expected_gbps)));
    }
  }

  // Measures one round and records it; `phase` names it in the results.
  std::vector<PairResult> measure_round(const PairRound& round, const std::string& phase) {
    const int index = round_index_++;
    const ProfileRange range([&] { return fmt::format("pair round {} ({}, {} pairs)", index, phase, round.size()); });
    const std::vector<double> gbps = probe_.measure_pairs(round);
    std::vector<PairResult> results;
    for (std::size_t i = 0; i < round.size(); ++i) {
      PairResult result{round[i].first, round[i].second, gbps[i], false, phase, index};
      result.slow = outcome_.pair_expected_gbps > 0 && result.gbps < outcome_.pair_expected_gbps;
      measured_.insert(round[i]);
      results.push_back(result);
      outcome_.pairs.push_back(result);
    }
    return results;
  }

  void pair_phase() {
    const int nodes = node_count();
    if (nodes < 2) {
      outcome_.notes.push_back("a single node: no pairs between nodes to measure");
      return;
    }
    std::vector<PairResult> first_results;
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
      outcome_.notes.push_back("two nodes: their one pair is its own median; give an expected figure (--expect) "
                               "to judge it");
      return;
    }
    resolve_suspects(first_results, "re-test");
  }

  // The pairs' expected figure: given, or the median of the first rounds (the majority of
  // a cluster's pairs are healthy; a few slow ones do not move the median).
  void set_pair_reference(std::vector<PairResult>& results) {
    std::vector<double> measured;
    for (const PairResult& result : results) measured.push_back(result.gbps);
    outcome_.pair_reference_gbps = settings_.expect.pair_gbps.value_or(median_of(measured));
    outcome_.pair_expected_gbps = settings_.expect.fraction * outcome_.pair_reference_gbps;
    for (PairResult& result : results) result.slow = result.gbps < outcome_.pair_expected_gbps;
    for (PairResult& result : outcome_.pairs) result.slow = result.gbps < outcome_.pair_expected_gbps;
  }

  void note_unconfirmed(const std::vector<PairResult>& results) {
    for (const PairResult& result : results)
      if (result.slow)
        outcome_.notes.push_back(fmt::format("pair {} - {} read {} (expected >= {}); not re-tested before the time limit",
                                             name(result.first), name(result.second), gbps_text(result.gbps),
                                             gbps_text(outcome_.pair_expected_gbps)));
  }

  // Suspect nodes (slow with more than half their partners) and suspect links (slow pairs
  // whose ends are not suspects) from `results`, re-tested and then decided.
  void resolve_suspects(const std::vector<PairResult>& results, const std::string& phase) {
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
        require_time(phase + " round " + std::to_string(outcome_.retest_rounds + 1));
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

  // Suspect links slow again on re-test beside another suspect link of their round that was
  // slow again too are measured once more, each alone in a round: one slow link can slow a
  // pair that runs beside it (an uplink or a core they share), and with no fresh partner
  // left (4 nodes or fewer) the same two pairs meet in one round every time. Seen on the
  // test cluster, where a link throttled with tc made the pair beside it read slow twice.
  void measure_crowded_links_alone(const std::vector<RankPair>& links, std::map<RankPair, PairResult>& retested,
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
      require_time(phase + " round " + std::to_string(outcome_.retest_rounds + 1));
      retested[link] = measure_round({link}, phase + " alone").front();
      ++outcome_.retest_rounds;
    }
  }

  // A suspect node is faulty when it is slow with its fresh partners too (or, where no
  // fresh partner was left, with at least two partners and every one of them, twice).
  void decide_nodes(const std::set<int>& suspects, std::map<int, std::vector<const PairResult*>>& by_node,
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
      const bool confirmed = fresh > 0 ? fresh_slow == fresh
                                       : partners >= 2 && slow_again &&
                                             slow_figures.size() == static_cast<std::size_t>(partners);
      if (confirmed) {
        add_fault(FaultKind::node, {node},
                  fmt::format("slow with {} of {} partners{}: median {}, expected >= {}", slow_figures.size(), partners,
                              fresh > 0 ? " (fresh ones on re-test included)" : "", gbps_text(median_of(slow_figures)),
                              gbps_text(outcome_.pair_expected_gbps)));
      } else if (fresh > 0) {
        outcome_.notes.push_back(fmt::format("{}: slow with {} of {} partners, but fast with {} of {} fresh partners on "
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
                            "slow link",
                            name(link.first), name(link.second), gbps_text(outcome_.pair_expected_gbps)));
    }
    undecided_links_.clear();
  }

  // The latest readings of a pair, in the order taken: "1 GB/s and 1.1 GB/s on re-test",
  // with ", 0.9 GB/s alone" where it was measured once more alone.
  std::string readings_text(const RankPair& pair) const {
    std::string first, retest, alone;
    for (const PairResult& result : outcome_.pairs) {
      if (RankPair{result.first, result.second} != pair) continue;
      std::string& reading = result.phase.ends_with(" alone")     ? alone
                             : result.phase.ends_with("re-test") ? retest
                                                                 : first;
      reading = gbps_text(result.gbps);
    }
    std::string text = first.empty() ? retest + " on re-test" : first + " and " + retest + " on re-test";
    return alone.empty() ? text : text + ", " + alone + " alone";
  }

  // A suspect link is faulty when it is slow again on re-test while each end is fast with
  // a fresh partner; an end slow with its fresh partner too is a faulty node instead.
  void decide_links(const std::vector<RankPair>& links, const std::map<int, std::vector<RankPair>>& fresh_pairs,
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
                  fmt::format("slow with {} and with a fresh partner on re-test, expected >= {}",
                              name(end == link.first ? link.second : link.first),
                              gbps_text(outcome_.pair_expected_gbps)));
      if (!slow_ends.empty()) continue;
      add_fault(FaultKind::link, {link.first, link.second},
                fmt::format("{}, expected >= {}; both ends are fast with other partners", readings_text(link),
                            gbps_text(outcome_.pair_expected_gbps)));
    }
  }

  std::vector<double> measure_groups(const std::vector<std::vector<int>>& groups, const std::string& phase) {
    const ProfileRange range([&] { return fmt::format("{}: {} node groups", phase, groups.size()); });
    const std::vector<double> busbw = probe_.measure_groups(groups);
    for (std::size_t i = 0; i < groups.size(); ++i)
      outcome_.groups.push_back({groups[i], busbw[i], busbw[i] < outcome_.group_expected_gbps, phase,
                                 outcome_.bisection_steps});
    return busbw;
  }

  void group_phase() {
    if (!settings_.group_collectives || node_count() < 2) return;
    const std::vector<int> excluded = outcome_.excluded_nodes();
    std::vector<int> active;
    for (int node = 0; node < node_count(); ++node)
      if (!std::binary_search(excluded.begin(), excluded.end(), node)) active.push_back(node);
    if (active.size() < 2) return;
    const double reference = settings_.expect.group_busbw_gbps.value_or(outcome_.pair_reference_gbps);
    if (reference <= 0) return;
    outcome_.group_expected_gbps = settings_.expect.fraction * reference;
    require_time("the collective over every node");
    const double busbw = measure_groups({active}, "all nodes").front();
    if (busbw >= outcome_.group_expected_gbps) return;
    // Short once is not yet a fault (as for the intra-node collectives): a burst of other
    // work on a node slows one collective; only one that is short twice is bisected.
    require_time("the collective over every node, again");
    const double again = measure_groups({active}, "all nodes again").front();
    if (again >= outcome_.group_expected_gbps) {
      outcome_.notes.push_back(fmt::format("the collective over every node read {} once, {} measured again: not reported",
                                           gbps_text(busbw), gbps_text(again)));
      return;
    }
    bisect(active, again);
  }

  // Narrows a group whose collective fell short down to groups of at most `pairs_below`
  // nodes, halving each step (all searched groups at once); when neither half of a group
  // falls short, the fault lies across the halves and two more steps pair their quarters.
  void bisect(const std::vector<int>& group, double busbw) {
    struct Searched {
      std::vector<int> nodes;
      double busbw;
    };
    std::vector<Searched> frontier{{group, busbw}}, small;
    const auto short_of = [&](double figure) { return figure < outcome_.group_expected_gbps; };
    const auto halves = [](const std::vector<int>& nodes) {
      const auto middle = nodes.begin() + static_cast<long>(nodes.size() / 2);
      return std::pair{std::vector<int>(nodes.begin(), middle), std::vector<int>(middle, nodes.end())};
    };
    const auto joined = [](std::vector<int> a, const std::vector<int>& b) {
      a.insert(a.end(), b.begin(), b.end());
      std::sort(a.begin(), a.end());
      return a;
    };
    while (!frontier.empty()) {
      std::vector<Searched> large;
      for (Searched& searched : frontier)
        (static_cast<int>(searched.nodes.size()) <= settings_.pairs_below ? small : large).push_back(searched);
      frontier.clear();
      if (large.empty()) break;
      std::vector<std::vector<int>> step;
      for (const Searched& searched : large) {
        auto [first, second] = halves(searched.nodes);
        step.push_back(first);
        step.push_back(second);
      }
      require_time("bisection step " + std::to_string(outcome_.bisection_steps + 1));
      const std::vector<double> figures = measure_groups(step, "bisection");
      ++outcome_.bisection_steps;
      std::vector<const Searched*> across;
      for (std::size_t i = 0; i < large.size(); ++i) {
        bool found = false;
        for (std::size_t half = 0; half < 2; ++half) {
          if (!short_of(figures[2 * i + half])) continue;
          frontier.push_back({step[2 * i + half], figures[2 * i + half]});
          found = true;
        }
        if (!found) across.push_back(&large[i]);
      }
      if (across.empty()) continue;
      // Quarters a1 a2 | b1 b2: a1∪b1 with a2∪b2, then a1∪b2 with a2∪b1.
      for (int pairing = 0; pairing < 2; ++pairing) {
        std::vector<std::vector<int>> cross;
        for (const Searched* searched : across) {
          auto [a, b] = halves(searched->nodes);
          auto [a1, a2] = halves(a);
          auto [b1, b2] = halves(b);
          cross.push_back(joined(a1, pairing == 0 ? b1 : b2));
          cross.push_back(joined(a2, pairing == 0 ? b2 : b1));
        }
        require_time("bisection step " + std::to_string(outcome_.bisection_steps + 1));
        const std::vector<double> cross_figures = measure_groups(cross, "bisection");
        ++outcome_.bisection_steps;
        for (std::size_t i = 0; i < cross.size(); ++i)
          if (short_of(cross_figures[i])) frontier.push_back({cross[i], cross_figures[i]});
      }
      for (const Searched* searched : across) {
        const bool narrowed = std::any_of(frontier.begin(), frontier.end(), [&](const Searched& found) {
          return std::includes(searched->nodes.begin(), searched->nodes.end(), found.nodes.begin(), found.nodes.end());
        });
        if (!narrowed) report_group(searched->nodes, searched->busbw, "no part of it does");
      }
    }
    test_small_groups(small);
  }

  // The pairs inside each group the bisection ended with, all groups at once; slow pairs
  // are suspects like those of phase 3. A group none of whose pairs is slow is reported.
  template <typename Searched>
  void test_small_groups(const std::vector<Searched>& groups) {
    std::vector<PairRound> rounds;
    for (const Searched& group : groups) {
      const std::vector<PairRound> inside = pair_rounds(PairSchedule::all_pairs, static_cast<int>(group.nodes.size()));
      if (rounds.size() < inside.size()) rounds.resize(inside.size());
      for (std::size_t r = 0; r < inside.size(); ++r)
        for (const auto& [a, b] : inside[r]) {
          const int first = group.nodes[static_cast<std::size_t>(a)], second = group.nodes[static_cast<std::size_t>(b)];
          rounds[r].push_back(ordered(first, second));
        }
    }
    std::vector<PairResult> results;
    for (const PairRound& round : rounds) {
      require_time("bisection step " + std::to_string(outcome_.bisection_steps + 1));
      const std::vector<PairResult> measured = measure_round(round, "bisection");
      results.insert(results.end(), measured.begin(), measured.end());
      ++outcome_.bisection_steps;
    }
    const std::size_t faults_before = outcome_.faults.size();
    resolve_suspects(results, "bisection re-test");
    for (const Searched& group : groups) {
      const bool explained = std::any_of(outcome_.faults.begin() + static_cast<long>(faults_before), outcome_.faults.end(),
                                         [&](const Fault& fault) {
                                           return std::all_of(fault.nodes.begin(), fault.nodes.end(), [&](int node) {
                                             return std::binary_search(group.nodes.begin(), group.nodes.end(), node);
                                           });
                                         });
      if (!explained) report_group(group.nodes, group.busbw, "every pair of it passes");
    }
  }

  // A group is reported only when its collective is short again now that no part of it
  // explains why: one short reading of a healthy group must not fail its nodes.
  void report_group(const std::vector<int>& nodes, double busbw, const std::string& why) {
    require_time("the group's collective, again");
    const double again = measure_groups({nodes}, "group re-test").front();
    const std::string figures = fmt::format("the collective over {} nodes read {}, {} measured again", nodes.size(),
                                            gbps_text(busbw), gbps_text(again));
    if (again >= outcome_.group_expected_gbps) {
      outcome_.notes.push_back(fmt::format("{}: {}: not reported", outcome_.host_list(nodes), figures));
      return;
    }
    add_fault(FaultKind::group, nodes,
              fmt::format("{}, expected >= {}, though {}", figures, gbps_text(outcome_.group_expected_gbps), why));
  }

  ClusterProbe& probe_;
  const PlanSettings& settings_;
  ValidationOutcome outcome_;
  std::set<int> faulty_;
  std::string phase_;  // the phase under way (require_time)
  std::set<RankPair> measured_;
  std::set<RankPair> undecided_links_;
  int round_index_ = 0;
};

}  // namespace

std::vector<PairRound> validation_pair_rounds(int nodes, int rounds, std::uint64_t seed) {
  if (nodes < 2 || rounds <= 0) return {};
  std::vector<int> shuffled(static_cast<std::size_t>(nodes));
  std::iota(shuffled.begin(), shuffled.end(), 0);
  std::mt19937_64 generator(seed);
  std::shuffle(shuffled.begin(), shuffled.end(), generator);
  const int available = nodes % 2 == 0 ? nodes - 1 : nodes;
  std::vector<PairRound> result;
  for (int round = 0; round < std::min(rounds, available); ++round) {
    PairRound pairs;
    for (const auto& [a, b] : circle_round(nodes, round))
      pairs.push_back(ordered(shuffled[static_cast<std::size_t>(a)], shuffled[static_cast<std::size_t>(b)]));
    std::sort(pairs.begin(), pairs.end());
    result.push_back(std::move(pairs));
  }
  return result;
}

ValidationOutcome run_validation_plan(ClusterProbe& probe, const PlanSettings& settings) {
  return PlanRun(probe, settings).run();
}

std::vector<int> ValidationOutcome::excluded_nodes() const {
  std::set<int> excluded;
  for (const Fault& fault : faults)
    if (fault.kind == FaultKind::node) excluded.insert(fault.nodes.front());
  // A faulty link leaves the job when either end does: cover the links greedily with the
  // end that appears in most of them (ties: the later node, so the result is stable).
  std::vector<RankPair> open;
  for (const Fault& fault : faults)
    if (fault.kind == FaultKind::link && !excluded.count(fault.nodes[0]) && !excluded.count(fault.nodes[1]))
      open.push_back({fault.nodes[0], fault.nodes[1]});
  while (!open.empty()) {
    std::map<int, int> degree;
    for (const RankPair& link : open) {
      ++degree[link.first];
      ++degree[link.second];
    }
    int chosen = degree.begin()->first;
    for (const auto& [node, count] : degree)
      if (count >= degree[chosen]) chosen = node;
    excluded.insert(chosen);
    std::erase_if(open, [&](const RankPair& link) { return link.first == chosen || link.second == chosen; });
  }
  return {excluded.begin(), excluded.end()};
}

std::string ValidationOutcome::host_list(const std::vector<int>& nodes) const {
  std::vector<std::string> names;
  for (const int node : nodes) names.push_back(node_names[static_cast<std::size_t>(node)]);
  return compress_hostlist(names);
}

std::vector<std::string> ValidationOutcome::node_verdicts() const {
  std::vector<std::string> verdicts(node_names.size());
  for (const Fault& fault : faults) {
    for (const int node : fault.nodes) {
      std::string text;
      switch (fault.kind) {
        case FaultKind::node: text = fault.reason; break;
        case FaultKind::link: {
          const int other = fault.nodes[0] == node ? fault.nodes[1] : fault.nodes[0];
          text = "link to " + node_names[static_cast<std::size_t>(other)] + " is slow";
          break;
        }
        case FaultKind::group: text = "in a group whose collective falls short"; break;
      }
      std::string& verdict = verdicts[static_cast<std::size_t>(node)];
      verdict += (verdict.empty() ? "" : "; ") + text;
    }
  }
  for (std::string& verdict : verdicts)
    if (verdict.empty()) verdict = "ok";
  return verdicts;
}

std::string_view name_of(FaultKind kind) {
  switch (kind) {
    case FaultKind::node: return "node";
    case FaultKind::link: return "link";
    case FaultKind::group: return "group";
  }
  return "?";
}

}  // namespace commbench
