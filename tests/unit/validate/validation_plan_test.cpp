#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <random>
#include <set>

#include "commbench/p2p/pair_schedule.hpp"
#include "commbench/validate/hostlist.hpp"
#include "commbench/validate/simulated_cluster.hpp"
#include "commbench/validate/validation_plan.hpp"
#include "usage_error.hpp"

namespace commbench {
namespace {

using testing::usage_error_of;

TEST(Hostlist, FoldsNumberedNamesIntoRangesAsSlurmWritesThem) {
  EXPECT_EQ(compress_hostlist({"node08", "node03", "node07"}), "node[03,07-08]");
  EXPECT_EQ(compress_hostlist({"node03"}), "node03");
  EXPECT_EQ(compress_hostlist({}), "");
  EXPECT_EQ(compress_hostlist({"gpu1", "gpu2", "gpu3", "gpu5", "login", "gpu2"}), "gpu[1-3,5],login");
  // Different widths are different hosts: never folded into one bracket.
  EXPECT_EQ(compress_hostlist({"n7", "n07", "n08"}), "n7,n[07-08]");
  EXPECT_EQ(compress_hostlist({"rack1-node09", "rack1-node10"}), "rack1-node[09-10]");
  EXPECT_EQ(compress_hostlist({"cb-node3"}), "cb-node3");
}

TEST(ValidationPairRounds, DisjointRoundsWithADifferentPartnerEachRound) {
  for (const int nodes : {2, 3, 4, 5, 64, 1023, 4096}) {
    const std::vector<PairRound> rounds = validation_pair_rounds(nodes, 3, 7);
    EXPECT_EQ(rounds.size(), static_cast<std::size_t>(nodes == 2 ? 1 : 3)) << nodes;
    std::map<int, std::set<int>> partners;
    std::set<RankPair> seen;
    for (const PairRound& round : rounds) {
      std::set<int> busy;
      for (const auto& [a, b] : round) {
        EXPECT_LT(a, b);
        EXPECT_TRUE(busy.insert(a).second && busy.insert(b).second) << "a node twice in a round";
        EXPECT_TRUE(seen.insert({a, b}).second) << "a pair twice";
        partners[a].insert(b);
        partners[b].insert(a);
      }
      EXPECT_EQ(round.size(), static_cast<std::size_t>(nodes / 2));
    }
    ASSERT_EQ(partners.size(), static_cast<std::size_t>(nodes));
    for (const auto& [node, met] : partners) EXPECT_GE(met.size(), nodes == 2 ? 1u : 2u) << node << " of " << nodes;
  }
  EXPECT_EQ(validation_pair_rounds(64, 3, 1), validation_pair_rounds(64, 3, 1));
  EXPECT_NE(validation_pair_rounds(64, 3, 1), validation_pair_rounds(64, 3, 2));
  EXPECT_TRUE(validation_pair_rounds(1, 3, 1).empty());
}

TEST(ValidationPairRounds, CircleRoundIsTheAllPairsScheduleRoundByRound) {
  for (const int ranks : {2, 5, 6, 9}) {
    const std::vector<PairRound> all = pair_rounds(PairSchedule::all_pairs, ranks);
    for (std::size_t r = 0; r < all.size(); ++r) EXPECT_EQ(circle_round(ranks, static_cast<int>(r)), all[r]);
    EXPECT_TRUE(circle_round(ranks, static_cast<int>(all.size())).empty());
  }
}

TEST(Degradations, ParsesNodesLinksAndFactors) {
  const std::vector<Degradation> parsed = parse_degradations("node:3,link:9-2@0.5", 16, 0.25, "--degrade");
  ASSERT_EQ(parsed.size(), 2u);
  EXPECT_EQ(parsed[0].node, 3);
  EXPECT_DOUBLE_EQ(parsed[0].factor, 0.25);
  EXPECT_EQ(parsed[1].node, -1);
  EXPECT_EQ(parsed[1].link, (RankPair{2, 9}));
  EXPECT_DOUBLE_EQ(parsed[1].factor, 0.5);
  EXPECT_EQ(usage_error_of([] { parse_degradations("node:16", 16, 0.25, "--degrade"); }),
            "--degrade: 'node:16': node numbers run from 0 to 15");
  EXPECT_EQ(usage_error_of([] { parse_degradations("link:3", 16, 0.25, "--degrade"); }),
            "--degrade: 'link:3': a link is link:A-B");
  EXPECT_EQ(usage_error_of([] { parse_degradations("link:3-3", 16, 0.25, "--degrade"); }),
            "--degrade: 'link:3-3': a link joins two different nodes");
  EXPECT_EQ(usage_error_of([] { parse_degradations("rack:1", 16, 0.25, "--degrade"); }),
            "--degrade: 'rack:1' is neither node:K nor link:A-B");
  EXPECT_EQ(usage_error_of([] { parse_degradations("node:1@2", 16, 0.25, "--degrade"); }),
            "--degrade: 'node:1@2': the factor after @ must lie between 0 and 1");
  EXPECT_EQ(usage_error_of([] { parse_degradations("", 16, 0.25, "--degrade"); }),
            "--degrade: '' is neither node:K nor link:A-B");
}

ValidationOutcome simulate(int nodes, const std::string& degrade, std::uint64_t seed, double noise = 0.03,
                           std::optional<double> expected_pair_gbps = std::nullopt) {
  SimulationModel model;
  model.nodes = nodes;
  model.seed = seed;
  model.noise = noise;
  SimulatedCluster cluster(
      model, degrade.empty() ? std::vector<Degradation>{} : parse_degradations(degrade, nodes, 0.25, "--degrade"));
  PlanSettings settings;
  settings.seed = seed;
  settings.expect.pair_gbps = expected_pair_gbps;
  return run_validation_plan(cluster, settings);
}

std::set<std::pair<FaultKind, std::vector<int>>> faults_of(const ValidationOutcome& outcome) {
  std::set<std::pair<FaultKind, std::vector<int>>> faults;
  for (const Fault& fault : outcome.faults) faults.insert({fault.kind, fault.nodes});
  return faults;
}

// The plan's pair rounds (first rounds and re-tests) for a cluster size: the figure that
// must not grow with the node count.
int pair_rounds_used(const ValidationOutcome& outcome) { return outcome.pair_rounds + outcome.retest_rounds; }

TEST(ValidationPlan, AHealthyClusterPassesAtEverySizeInThreeRounds) {
  for (const int nodes : {2, 3, 4, 64, 1024, 4096}) {
    const ValidationOutcome outcome = simulate(nodes, "", 11);
    EXPECT_TRUE(outcome.faults.empty()) << nodes << ": " << outcome.faults.front().reason;
    EXPECT_TRUE(outcome.complete);
    EXPECT_EQ(outcome.pair_rounds, nodes == 2 ? 1 : 3) << nodes;
    EXPECT_EQ(outcome.retest_rounds, 0) << nodes;
    EXPECT_EQ(outcome.bisection_steps, 0) << nodes;
    EXPECT_TRUE(outcome.excluded_nodes().empty());
    EXPECT_NEAR(outcome.pair_reference_gbps, 50, 5);
    ASSERT_EQ(outcome.groups.size(), 1u);  // the collective over every node
    EXPECT_EQ(outcome.groups[0].nodes.size(), static_cast<std::size_t>(nodes));
  }
}

TEST(ValidationPlan, EverySampledSlowNodeIsNamedAloneAndRoundsDoNotGrow) {
  std::map<int, int> most_rounds;
  for (const int nodes : {4, 64, 1024, 4096}) {
    std::mt19937 pick(static_cast<unsigned>(nodes));
    for (int sample = 0; sample < 6; ++sample) {
      const int slow = static_cast<int>(pick() % static_cast<unsigned>(nodes));
      const ValidationOutcome outcome = simulate(nodes, "node:" + std::to_string(slow), 100 + sample);
      const std::set<std::pair<FaultKind, std::vector<int>>> expected{{FaultKind::node, {slow}}};
      EXPECT_EQ(faults_of(outcome), expected) << "node " << slow << " of " << nodes;
      EXPECT_EQ(outcome.excluded_nodes(), std::vector<int>{slow});
      EXPECT_EQ(outcome.bisection_steps, 0);
      most_rounds[nodes] = std::max(most_rounds[nodes], pair_rounds_used(outcome));
    }
  }
  // Three rounds, plus two re-test rounds pairing the slow node with two fresh partners;
  // at 4 nodes none is left (every pair was measured) and its 3 pairs are measured again.
  for (const auto& [nodes, rounds] : most_rounds) EXPECT_LE(rounds, nodes == 4 ? 6 : 5) << nodes;
  EXPECT_EQ(most_rounds[64], most_rounds[4096]);
}

TEST(ValidationPlan, EverySampledSlowLinkIsNamedAsALinkNotAsItsNodes) {
  std::map<int, int> most_rounds;
  for (const int nodes : {4, 64, 1024, 4096}) {
    std::mt19937 pick(static_cast<unsigned>(nodes) + 1);
    for (int sample = 0; sample < 6; ++sample) {
      const int a = static_cast<int>(pick() % static_cast<unsigned>(nodes));
      int b = static_cast<int>(pick() % static_cast<unsigned>(nodes - 1));
      if (b >= a) ++b;
      const ValidationOutcome outcome =
          simulate(nodes, "link:" + std::to_string(a) + "-" + std::to_string(b), 200 + sample);
      const std::set<std::pair<FaultKind, std::vector<int>>> expected{
          {FaultKind::link, {std::min(a, b), std::max(a, b)}}};
      EXPECT_EQ(faults_of(outcome), expected) << "link " << a << "-" << b << " of " << nodes;
      ASSERT_EQ(outcome.excluded_nodes().size(), 1u);
      EXPECT_TRUE(outcome.excluded_nodes()[0] == a || outcome.excluded_nodes()[0] == b);
      most_rounds[nodes] = std::max(most_rounds[nodes], pair_rounds_used(outcome));
      // Bisection finds a link the pair rounds did not meet in about 3 steps per halving.
      EXPECT_LE(outcome.bisection_steps, 3 * 13 + 6) << nodes;
    }
  }
  for (const auto& [nodes, rounds] : most_rounds) EXPECT_LE(rounds, 5) << nodes;
}

TEST(ValidationPlan, ANoisyHealthyClusterIsClearedOnReTest) {
  // 10 % noise: a few healthy pairs read below 75 % of the median; each is re-tested and
  // none is reported.
  const ValidationOutcome outcome = simulate(1024, "", 5, 0.10);
  EXPECT_TRUE(outcome.faults.empty()) << outcome.faults.front().reason;
  EXPECT_GT(outcome.retest_rounds, 0);
  EXPECT_EQ(outcome.intra_measurements, 2);  // some node read low once and was measured again
  EXPECT_LE(outcome.retest_rounds, 3);
  EXPECT_FALSE(outcome.notes.empty());
}

TEST(ValidationPlan, ASlowNodeAndASlowLinkTogether) {
  const ValidationOutcome outcome = simulate(64, "node:5,link:20-41", 3);
  const std::set<std::pair<FaultKind, std::vector<int>>> expected{{FaultKind::node, {5}}, {FaultKind::link, {20, 41}}};
  EXPECT_EQ(faults_of(outcome), expected);
  EXPECT_EQ(outcome.node_verdicts()[20], "link to node41 is slow");
  EXPECT_EQ(outcome.node_verdicts()[0], "ok");
  EXPECT_EQ(outcome.excluded_nodes().size(), 2u);
}

// A healthy simulated cluster whose group collectives read `factor` of their figure: the
// first `disturbed` of them (a burst of other work), or every one over a group holding all
// of `hidden` (a fault only load on several nodes shows).
class ShortGroups final : public ClusterProbe {
 public:
  ShortGroups(int nodes, double factor) : cluster_(model_of(nodes), {}), factor_(factor) {}
  int disturbed = 0;
  std::vector<int> hidden;
  int group_calls = 0;

  int nodes() const override { return cluster_.nodes(); }
  std::string node_name(int node) const override { return cluster_.node_name(node); }
  std::vector<std::vector<std::string>> local_findings() override { return cluster_.local_findings(); }
  std::vector<std::optional<double>> intra_node_busbw() override { return cluster_.intra_node_busbw(); }
  std::vector<double> measure_pairs(const PairRound& round) override { return cluster_.measure_pairs(round); }
  std::vector<double> measure_groups(const std::vector<std::vector<int>>& groups) override {
    std::vector<double> busbw = cluster_.measure_groups(groups);
    const bool burst = group_calls++ < disturbed;
    for (std::size_t i = 0; i < groups.size(); ++i) {
      const bool holds_hidden =
          !hidden.empty() && std::includes(groups[i].begin(), groups[i].end(), hidden.begin(), hidden.end());
      if (burst || holds_hidden) busbw[i] *= factor_;
    }
    return busbw;
  }
  double elapsed_seconds() override { return cluster_.elapsed_seconds(); }

 private:
  static SimulationModel model_of(int nodes) {
    SimulationModel model;
    model.nodes = nodes;
    return model;
  }
  SimulatedCluster cluster_;
  double factor_;
};

TEST(ValidationPlan, ACollectiveShortOnceIsMeasuredAgainAndNotReported) {
  ShortGroups probe(16, 0.4);
  probe.disturbed = 1;
  const ValidationOutcome outcome = run_validation_plan(probe, PlanSettings{});
  EXPECT_TRUE(outcome.faults.empty()) << outcome.faults.front().reason;
  ASSERT_EQ(outcome.groups.size(), 2u);
  EXPECT_EQ(outcome.groups[1].phase, "all nodes again");
  EXPECT_TRUE(outcome.groups[0].short_of_expected);
  EXPECT_FALSE(outcome.groups[1].short_of_expected);
  EXPECT_EQ(outcome.bisection_steps, 0);
  ASSERT_EQ(outcome.notes.size(), 1u);
  EXPECT_NE(outcome.notes[0].find("the collective over every node read"), std::string::npos) << outcome.notes[0];
}

TEST(ValidationPlan, AGroupShortEveryTimeThatNoPairExplainsIsReportedAsAGroup) {
  ShortGroups probe(8, 0.4);
  probe.hidden = {1, 2};
  const ValidationOutcome outcome = run_validation_plan(probe, PlanSettings{});
  // Halved to nodes 0-3, whose pairs all pass; measured again, still short.
  const std::set<std::pair<FaultKind, std::vector<int>>> expected{{FaultKind::group, {0, 1, 2, 3}}};
  EXPECT_EQ(faults_of(outcome), expected);
  EXPECT_TRUE(outcome.excluded_nodes().empty());
  EXPECT_EQ(outcome.groups.back().phase, "group re-test");
  EXPECT_NE(outcome.faults[0].reason.find("every pair of it passes"), std::string::npos) << outcome.faults[0].reason;
  // The same group short only while a burst lasts is a note, not a fault.
  ShortGroups bursts(8, 0.4);
  bursts.disturbed = 3;  // every node twice, then the halves
  const ValidationOutcome cleared = run_validation_plan(bursts, PlanSettings{});
  EXPECT_TRUE(cleared.faults.empty()) << cleared.faults.front().reason;
  EXPECT_GT(cleared.bisection_steps, 0);
  EXPECT_NE(cleared.notes.back().find("not reported"), std::string::npos) << cleared.notes.back();
}

// A simulated cluster of 4 nodes whose pair readings `adjust` changes after the model made
// them: what a real cluster does that the model has no term for. On 4 nodes every pair is
// met in the first rounds, so no fresh partner is left for a re-test.
class AdjustedPairs final : public ClusterProbe {
 public:
  using Adjust = std::function<void(int round, const PairRound&, std::vector<double>& gbps)>;
  AdjustedPairs(const std::string& degrade, Adjust adjust)
      : cluster_(model(),
                 degrade.empty() ? std::vector<Degradation>{} : parse_degradations(degrade, 4, 0.25, "--degrade")),
        adjust_(std::move(adjust)) {}
  int nodes() const override { return 4; }
  std::string node_name(int node) const override { return cluster_.node_name(node); }
  std::vector<std::vector<std::string>> local_findings() override { return cluster_.local_findings(); }
  std::vector<std::optional<double>> intra_node_busbw() override { return cluster_.intra_node_busbw(); }
  std::vector<double> measure_pairs(const PairRound& round) override {
    std::vector<double> gbps = cluster_.measure_pairs(round);
    adjust_(rounds_++, round, gbps);
    return gbps;
  }
  std::vector<double> measure_groups(const std::vector<std::vector<int>>& groups) override {
    return cluster_.measure_groups(groups);
  }
  double elapsed_seconds() override { return cluster_.elapsed_seconds(); }

 private:
  static SimulationModel model() {
    SimulationModel model;
    model.nodes = 4;
    return model;
  }
  SimulatedCluster cluster_;
  Adjust adjust_;
  int rounds_ = 0;
};

TEST(ValidationPlan, ANodeSlowOnceWithNoFreshPartnerLeftIsMeasuredAgain) {
  // A burst on node 1 makes all its first-round pairs slow; measured again, they are fast.
  AdjustedPairs probe("", [](int round, const PairRound& pairs, std::vector<double>& gbps) {
    if (round < 3)
      for (std::size_t i = 0; i < pairs.size(); ++i)
        if (pairs[i].first == 1 || pairs[i].second == 1) gbps[i] *= 0.2;
  });
  const ValidationOutcome outcome = run_validation_plan(probe, PlanSettings{});
  EXPECT_TRUE(outcome.faults.empty()) << outcome.faults.front().reason;
  EXPECT_EQ(outcome.retest_rounds, 3);  // node 1's three pairs, one per round
  ASSERT_EQ(outcome.notes.size(), 3u);
  EXPECT_NE(outcome.notes[0].find("was slow once"), std::string::npos) << outcome.notes[0];
}

TEST(ValidationPlan, ALinkSlowOnlyBesideAThrottledOneIsClearedWhenMeasuredAlone) {
  // Link 1-2 throttled; whatever pair runs in the same round reads slow too (on the test
  // cluster the throttled pair's spinning ranks starve the pair beside it). With no fresh
  // partner left, the two links meet in one round again on re-test.
  AdjustedPairs probe("link:1-2@0.02", [](int, const PairRound& pairs, std::vector<double>& gbps) {
    if (std::count(pairs.begin(), pairs.end(), RankPair{1, 2}) == 0) return;
    for (std::size_t i = 0; i < pairs.size(); ++i)
      if (pairs[i] != RankPair{1, 2}) gbps[i] *= 0.3;
  });
  const ValidationOutcome outcome = run_validation_plan(probe, PlanSettings{});
  const std::set<std::pair<FaultKind, std::vector<int>>> expected{{FaultKind::link, {1, 2}}};
  EXPECT_EQ(faults_of(outcome), expected);
  // One re-test round with both links in it, then each alone.
  EXPECT_EQ(outcome.retest_rounds, 3);
  ASSERT_EQ(outcome.faults.size(), 1u);
  EXPECT_NE(outcome.faults[0].reason.find(" on re-test, "), std::string::npos) << outcome.faults[0].reason;
  EXPECT_NE(outcome.faults[0].reason.find(" alone, expected >= "), std::string::npos) << outcome.faults[0].reason;
  const auto cleared = std::find_if(outcome.notes.begin(), outcome.notes.end(), [](const std::string& note) {
    return note.rfind("pair node00 - node03 was slow once", 0) == 0;
  });
  EXPECT_NE(cleared, outcome.notes.end()) << (outcome.notes.empty() ? "no note" : outcome.notes.front());
  std::vector<std::string> alone;
  for (const PairResult& result : outcome.pairs)
    if (result.phase == "re-test alone")
      alone.push_back(std::to_string(result.first) + "-" + std::to_string(result.second));
  std::sort(alone.begin(), alone.end());
  EXPECT_EQ(alone, (std::vector<std::string>{"0-3", "1-2"}));
}

TEST(ValidationPlan, TwoNodesCannotTellANodeFromALink) {
  // Without an expected figure one pair has nothing to be compared with: said, not failed.
  const ValidationOutcome alone = simulate(2, "node:1", 3);
  EXPECT_TRUE(alone.faults.empty());
  ASSERT_FALSE(alone.notes.empty());
  EXPECT_NE(alone.notes[0].find("give an expected figure"), std::string::npos) << alone.notes[0];
  const ValidationOutcome outcome = simulate(2, "node:1", 3, 0.03, 50);
  ASSERT_EQ(outcome.faults.size(), 1u);
  EXPECT_EQ(outcome.faults[0].kind, FaultKind::link);
  EXPECT_NE(outcome.faults[0].reason.find("no third node"), std::string::npos) << outcome.faults[0].reason;
}

TEST(ValidationPlan, TheTimeLimitStopsThePlanWithWhatItKnows) {
  SimulationModel model;
  model.nodes = 64;
  SimulatedCluster cluster(model, parse_degradations("node:9", 64, 0.25, "--degrade"));
  PlanSettings settings;
  settings.time_limit_seconds = 5.5;  // local checks take 5 modelled seconds, a round about 0.26
  const ValidationOutcome outcome = run_validation_plan(cluster, settings);
  EXPECT_FALSE(outcome.complete);
  EXPECT_NE(outcome.stopped_before.find("pair round"), std::string::npos) << outcome.stopped_before;
  EXPECT_LT(outcome.pair_rounds, 3);
}

}  // namespace
}  // namespace commbench

namespace commbench {
namespace {

// A simulated cluster whose probe also says what each node's NIC showed, as the job's
// probe does from the counters it read around the pair rounds.
class ClusterWithNics final : public ClusterProbe {
 public:
  ClusterWithNics(SimulatedCluster& cluster, int slow_node) : cluster_(cluster), slow_node_(slow_node) {}
  int nodes() const override { return cluster_.nodes(); }
  std::string node_name(int node) const override { return cluster_.node_name(node); }
  std::vector<std::vector<std::string>> local_findings() override { return cluster_.local_findings(); }
  std::vector<std::optional<double>> intra_node_busbw() override { return cluster_.intra_node_busbw(); }
  std::vector<double> measure_pairs(const PairRound& round) override { return cluster_.measure_pairs(round); }
  std::vector<double> measure_groups(const std::vector<std::vector<int>>& groups) override {
    return cluster_.measure_groups(groups);
  }
  double elapsed_seconds() override { return cluster_.elapsed_seconds(); }
  std::string nics_of(int node) const override {
    return node == slow_node_ ? "mlx5_3:1 fell short in 3 of 3 compared rounds (busiest 12.000 GB/s)"
                              : "mlx5_0:1 (busiest 48.000 GB/s)";
  }

 private:
  SimulatedCluster& cluster_;
  int slow_node_;
};

TEST(ValidationPlan, ASlowNodesFailLineNamesTheNicTheProbeSaw) {
  SimulationModel model;
  model.nodes = 16;
  SimulatedCluster simulated(model, parse_degradations("node:5", 16, 0.25, "--degrade"));
  ClusterWithNics cluster(simulated, 5);
  const ValidationOutcome outcome = run_validation_plan(cluster, PlanSettings{});
  ASSERT_EQ(outcome.faults.size(), 1u);
  EXPECT_EQ(outcome.faults[0].nodes, std::vector<int>{5});
  const std::string& reason = outcome.faults[0].reason;
  EXPECT_NE(reason.find("; NIC: node05 mlx5_3:1 fell short in 3 of 3 compared rounds (busiest 12.000 GB/s)"),
            std::string::npos)
      << reason;
  EXPECT_EQ(reason.find("mlx5_0:1"), std::string::npos) << reason;  // no other node's NIC
  // Without NIC readings the line is as before.
  SimulatedCluster plain(model, parse_degradations("node:5", 16, 0.25, "--degrade"));
  const ValidationOutcome before = run_validation_plan(plain, PlanSettings{});
  ASSERT_EQ(before.faults.size(), 1u);
  EXPECT_EQ(before.faults[0].reason.find("NIC:"), std::string::npos);
  EXPECT_EQ(before.faults[0].reason + reason.substr(reason.find("; NIC:")), reason);
}

}  // namespace
}  // namespace commbench
