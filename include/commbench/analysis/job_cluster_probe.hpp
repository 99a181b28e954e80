// The ClusterProbe of a real bench-validate job: every figure the plan asks for is
// measured over the backend, by every rank together, through the one measurement loop
// (warm-up, optional check, fixed count, watchdog). Nodes are the job's hosts in rank
// order; a pair of nodes exchanges rail by rail (local rank i with local rank i, both
// ways at once) and moves what its slowest rail moves; a group's figure is the busbw of
// an allreduce over a sub-communicator of its nodes' ranks.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commbench/backend/backend.hpp"
#include "commbench/core/reading_budget.hpp"
#include "commbench/runner/job_steps.hpp"
#include "commbench/analysis/nic_watch.hpp"
#include "commbench/topology/gpu_health.hpp"
#include "commbench/topology/nic_health.hpp"
#include "commbench/validate/site_expectations.hpp"
#include "commbench/validate/validation_plan.hpp"

namespace commbench {

struct ProbeMeasurement {
  std::uint64_t pair_bytes = std::uint64_t{64} << 20;
  std::uint64_t collective_bytes = std::uint64_t{64} << 20;
  std::uint64_t iterations = 10;
  std::uint64_t warmup = 2;
  bool check = false;
  std::vector<NamedValue> expected_facts;  // site file; else the majority
};

class JobClusterProbe final : public ClusterProbe {
 public:
  // Collective (it agrees on the clock's start).
  JobClusterProbe(JobSteps& session, Backend& backend, ProbeMeasurement measurement);

  int nodes() const override { return static_cast<int>(node_names_.size()); }
  std::string node_name(int node) const override { return node_names_[static_cast<std::size_t>(node)]; }
  std::vector<std::vector<std::string>> local_findings() override;
  std::vector<std::optional<double>> intra_node_busbw() override;
  std::vector<double> measure_pairs(const PairRound& round) override;
  std::vector<double> measure_groups(const std::vector<std::vector<int>>& groups) override;
  double elapsed_seconds() override;
  void wait_until(double seconds) override;
  // Each node's first rank reads its NICs' error counters, state and rate, and its GPUs'
  // XIDs and throttling through NVML where it loads (soak intervals).
  std::vector<std::vector<std::string>> node_changes() override;
  std::vector<NicReading> last_round_nics() const override { return last_nics_; }
  std::string nics_of(int node) const override;
  // Readings get budgets once the plan or the soak states what it expects (nothing: the
  // fastest pair of each round stands for the rate).
  void expect(const ReadingExpectation& expectation) override { expectation_ = expectation; }
  ReadingCuts last_cuts() const override { return last_cuts_; }
  // Wrong bytes or elements any check found (0 without --check).
  std::uint64_t wrong() const { return wrong_; }

 private:
  // The allreduce busbw over `backend` (a sub-communicator), on its ranks; with a budget
  // (a group reading), `cut` says whether it ran out of it.
  double allreduce_busbw(Backend& backend, const std::optional<ReadingBudget>& budget, bool& cut);
  // The same on a node's or a group's communicator, which agrees on SIGINT/SIGTERM among
  // its own ranks only: the signal is kept in `signal` (and `idle` returned) for
  // gather_from to share with the whole job. Without `backend` (an idle rank), `idle`.
  double subgroup_busbw(Backend* backend, double idle, int& signal, const std::optional<ReadingBudget>& budget,
                        bool& cut);
  // Iterations a reading plans: warm-up, calibration and timed.
  std::uint64_t planned_iterations() const { return measurement_.warmup + 1 + measurement_.iterations; }
  // The budget of a reading whose iterations are expected to take `expected_seconds`
  // each (infinity: not known).
  ReadingBudget budget_of(double expected_seconds, bool takes_part) const;
  // Every rank's figure, from rank `owner[k]` for entry k. Collective over the job: when
  // any rank brings a `signal`, every rank throws Interrupted here, together.
  std::vector<double> gather_from(double own, const std::vector<int>& owners, const std::string& what, int signal = 0);

  // The rails of a pair round's NIC readings, as last_round_nics() gives them.
  void keep_rails(const std::vector<NodeNic>& nics);

  JobSteps& session_;
  Backend& backend_;
  std::unique_ptr<NicWatch> nic_watch_;      // each node's counters around the pair rounds
  std::optional<NicHealthSnapshot> health_;
  std::unique_ptr<GpuHealthMonitor> gpu_monitor_;  // NVML, loaded at a node's first reading
  std::optional<GpuHealthSnapshot> gpu_health_;
  std::vector<NicReading> last_nics_;  // the rails of the last pair round  // the last reading of node_changes, on a node's first rank
  int pair_rounds_ = 0;
  ProbeMeasurement measurement_;
  std::vector<std::string> node_names_;
  std::vector<std::vector<int>> node_ranks_;  // ranks of each node, ascending
  int own_node_ = 0;
  std::chrono::steady_clock::time_point started_;
  std::uint64_t wrong_ = 0;
  std::optional<ReadingExpectation> expectation_;
  ReadingCuts last_cuts_;
};

}  // namespace commbench
