// bench-validate --simulate: a cluster of N nodes that exists only as a model, so the
// plan's pairing, verdicts, re-tests and bisection can be run at thousands of nodes
// without processes. Each node has one NIC of `nic_gbps`; a pair moves the slower of its
// two ends (times a degraded link's factor) and a collective over a group the slowest of
// its members and of the degraded links inside it; every figure gets multiplicative noise
// from a seeded generator. Time is modelled too, for the estimate the docs give.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "commbench/validate/validation_plan.hpp"

namespace commbench {

struct Degradation {
  int node = -1;      // node:K
  RankPair link{};    // link:A-B (when node < 0)
  double factor = 0;  // what is left of the healthy figure
  // Modelled seconds in which it holds ("/FROM-UNTIL"): a soak's fault that comes and goes.
  double from_s = 0;
  double until_s = std::numeric_limits<double>::infinity();
};

// "node:K", "link:A-B", each optionally "@F" (0 < F < 1; default `default_factor`) and
// "/FROM-UNTIL" (modelled seconds; default: always), several separated by commas; node numbers 0..nodes-1. UsageError
// naming `flag` otherwise.
std::vector<Degradation> parse_degradations(std::string_view text, int nodes, double default_factor,
                                            std::string_view flag);

// Every figure here is an assumption, not a measurement (docs/validate.md); the plan's
// verdicts depend only on their ratios.
struct SimulationModel {
  int nodes = 0;
  double nic_gbps = 50;            // one direction, per node: a 400 Gb/s port's line rate
  double collective_share = 0.92;  // a ring collective's busbw over the NIC's rate (assumed)
  double intra_busbw_gbps = 370;   // the bandwidth model's achievable for 8 NVLinked H100s
  double noise = 0.03;             // relative standard deviation of every figure
  std::uint64_t seed = 1;
  // The time model: messages per measurement and their size, and fixed costs.
  std::uint64_t message_bytes = std::uint64_t{64} << 20;
  std::uint64_t iterations = 12;       // warm-up and timed
  double round_seconds = 0.2;          // launching and agreeing on one pair round
  double group_setup_seconds = 1.0;    // splitting communicators for one step...
  double group_setup_per_node = 1e-3;  // ...and per node of the largest group
  double local_check_seconds = 5;      // probing a node's topology (all nodes at once)
};

std::string simulated_node_name(int node, int nodes);  // "node0007" (width of the largest)

class SimulatedCluster final : public ClusterProbe {
 public:
  SimulatedCluster(SimulationModel model, std::vector<Degradation> degradations);

  int nodes() const override { return model_.nodes; }
  std::string node_name(int node) const override { return simulated_node_name(node, model_.nodes); }
  std::vector<std::vector<std::string>> local_findings() override;
  std::vector<std::optional<double>> intra_node_busbw() override;
  std::vector<double> measure_pairs(const PairRound& round) override;
  std::vector<double> measure_groups(const std::vector<std::vector<int>>& groups) override;
  double elapsed_seconds() override { return elapsed_; }
  void wait_until(double seconds) override { elapsed_ = std::max(elapsed_, seconds); }
  // Budgets as a job's readings get them: a reading that would overrun its budget ends
  // after the iteration that spends it (its figure is its rate all the same).
  void expect(const ReadingExpectation& expectation) override { expectation_ = expectation; }
  ReadingCuts last_cuts() const override { return last_cuts_; }

 private:
  double noisy(double figure);
  // What is left of a node's or a link's figure at modelled time `at`.
  double node_factor(int node, double at) const;
  double link_factor(int a, int b, double at) const;
  double pair_factor(int a, int b, double at) const;
  // A pair's reading where its degradation changes while it moves its bytes (a window
  // opens or closes): the bytes over the time they took. Nullopt where the rate holds.
  std::optional<double> stretched_gbps(int a, int b) const;
  // The seconds readings at `gbps` take, each cut at the budget from `expected_gbps` (0:
  // the fastest of them stands for it); sets last_cuts_. `bytes_per_iteration` moved at
  // each reading's rate, `model_.iterations` times.
  std::vector<double> bounded_seconds(const std::vector<double>& gbps, double bytes_per_iteration,
                                      double expected_gbps);

  SimulationModel model_;
  std::vector<Degradation> nodes_, links_;
  std::mt19937_64 generator_;
  std::normal_distribution<double> normal_{0.0, 1.0};
  double elapsed_ = 0;
  std::optional<ReadingExpectation> expectation_;
  ReadingCuts last_cuts_;
};

}  // namespace commbench
