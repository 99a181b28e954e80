// The validation plan's run, shared by the files that hold its phases: validation_plan.cpp
// (the run, node-local checks, intra-node collectives), validation_pair_phase.cpp (node
// pairs in rounds, suspects re-tested with fresh partners) and validation_group_phase.cpp
// (a collective over every node, bisected when it falls short).
#pragma once

#include <initializer_list>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "commbench/validate/validation_plan.hpp"

namespace commbench::plan_detail {

// Thrown when the time limit is reached before a round or step: the plan reports what it
// has measured so far.
struct TimeUp {
  std::string next;
};

std::string gbps_text(double gbps);
RankPair ordered(int a, int b);
// Packs pairs into rounds in which no node appears twice (first fit, in the given order).
std::vector<PairRound> pack_into_rounds(const std::vector<RankPair>& pairs);

// A group the bisection searched, with the busbw it measured.
struct SearchedGroup {
  std::vector<int> nodes;
  double busbw;
};

class PlanRun {
 public:
  PlanRun(ClusterProbe& probe, const PlanSettings& settings) : probe_(probe), settings_(settings) {}
  ValidationOutcome run();

 private:
  int node_count() const { return static_cast<int>(outcome_.node_names.size()); }
  const std::string& name(int node) const { return outcome_.node_names[static_cast<std::size_t>(node)]; }
  // Called as each phase begins, with its name: what a time limit or a signal cut off.
  void require_time(const std::string& next);
  void add_fault(FaultKind kind, std::vector<int> nodes, std::string reason);
  void local_checks();
  // A node below the expected figure is measured again (all nodes at once: it is one
  // step) and fails only if it is below it both times.
  void intra_node_collectives();
  // Measures one round and records it; `phase` names it in the results.
  std::vector<PairResult> measure_round(const PairRound& round, const std::string& phase);
  void pair_phase();
  // The pairs' expected figure: given, or the median of the first rounds (the majority of
  // a cluster's pairs are healthy; a few slow ones do not move the median).
  void set_pair_reference(std::vector<PairResult>& results);
  // The rate later pair readings' budgets come from: the given figure, else the median of
  // the first readings that ran within their budget (the reference where none did).
  double budget_pair_gbps(const std::vector<PairResult>& results) const;
  void note_unconfirmed(const std::vector<PairResult>& results);
  // Suspect nodes (slow with more than half their partners) and suspect links (slow pairs
  // whose ends are not suspects) from `results`, re-tested and then decided.
  void resolve_suspects(const std::vector<PairResult>& results, const std::string& phase);
  // Suspect links slow again on re-test beside another suspect link of their round that was
  // slow again too are measured once more, each alone in a round: one slow link can slow a
  // pair that runs beside it (an uplink or a core they share), and with no fresh partner
  // left (4 nodes or fewer) the same two pairs meet in one round every time (a link
  // throttled with tc makes the pair beside it read slow twice).
  void measure_crowded_links_alone(const std::vector<RankPair>& links, std::map<RankPair, PairResult>& retested,
                                   const std::string& phase);
  // A suspect node is faulty when it is slow with its fresh partners too (or, where no
  // fresh partner was left, with at least two partners and every one of them, twice).
  void decide_nodes(const std::set<int>& suspects, std::map<int, std::vector<const PairResult*>>& by_node,
                    const std::map<int, std::vector<RankPair>>& fresh_pairs,
                    const std::map<int, std::vector<RankPair>>& again_pairs,
                    const std::map<RankPair, PairResult>& retested);
  // The latest readings of a pair, in the order taken: "1 GB/s and 1.1 GB/s on re-test",
  // with ", 0.9 GB/s alone" where it was measured once more alone.
  std::string readings_text(const RankPair& pair) const;
  // "; 3 of 3 readings cut short at their time budget": of node `a`'s readings (a == b)
  // or of the pair a - b; empty when none was cut short.
  std::string cut_short_text(int a, int b) const;
  // "; NIC: cb-node3 eth0 fell short in ..." for a FAIL line: what the probe read of the
  // nodes' NICs in the pair rounds; empty when it read nothing.
  std::string nics_text(std::initializer_list<int> nodes) const;
  // A suspect link is faulty when it is slow again on re-test while each end is fast with
  // a fresh partner; an end slow with its fresh partner too is a faulty node instead.
  void decide_links(const std::vector<RankPair>& links, const std::map<int, std::vector<RankPair>>& fresh_pairs,
                    const std::map<RankPair, PairResult>& retested);
  std::vector<double> measure_groups(const std::vector<std::vector<int>>& groups, const std::string& phase);
  void group_phase();
  // Narrows a group whose collective fell short down to groups of at most `pairs_below`
  // nodes, halving each step (all searched groups at once); when neither half of a group
  // falls short, the fault lies across the halves and two more steps pair their quarters.
  void bisect(const std::vector<int>& group, double busbw);
  // The pairs inside each group the bisection ended with, all groups at once; slow pairs
  // are suspects like those of phase 3. A group none of whose pairs is slow is reported.
  void test_small_groups(const std::vector<SearchedGroup>& groups);
  // A group is reported only when its collective is short again now that no part of it
  // explains why: one short reading of a healthy group must not fail its nodes.
  void report_group(const std::vector<int>& nodes, double busbw, const std::string& why);

  ClusterProbe& probe_;
  const PlanSettings& settings_;
  ValidationOutcome outcome_;
  std::set<int> faulty_;
  std::string phase_;  // the phase under way (require_time)
  std::set<RankPair> measured_;
  std::set<RankPair> undecided_links_;
  int round_index_ = 0;
};

}  // namespace commbench::plan_detail
