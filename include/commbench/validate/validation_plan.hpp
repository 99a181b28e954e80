// bench-validate's plan: which nodes to measure with which, in what order, and what the
// measurements say about each node and link. It only asks a ClusterProbe for figures, so
// the same logic decides a real job (probes over the backend, one srun) and a simulated
// cluster of thousands of nodes (--simulate), which is how it is shown to scale.
//
// The plan, in order:
//   1. node-local checks (the probe's findings: topology facts against the majority or a
//      file of expected values);
//   2. a collective inside every node at once;
//   3. pair rounds between nodes: a fixed number of rounds of the all-pairs schedule over a
//      seeded shuffle of the nodes, so every node meets several different partners however
//      many nodes there are. A node slow with (most of) its partners is a suspect node; a
//      slow pair between nodes that are otherwise fast is a suspect link. Suspects are
//      re-tested, a node with fresh partners, a link on its own and each of its ends with a
//      fresh partner, before anything is reported;
//   4. a collective over every node not already excluded; when it falls short although no
//      pair did, node groups are bisected (disjoint groups measured at once) down to a few
//      nodes, whose pairs are then measured.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "commbench/p2p/pair_schedule.hpp"

namespace commbench {

// What one node's port carried during the last pair round (a soak's interval record).
struct NicReading {
  int node = 0;
  std::string nic;                     // "mlx5_0:1", "eth0"
  std::optional<std::uint64_t> bytes;  // sent and received; absent when its counters could not tell
  double seconds = 0;                  // how long the counters were watched
  double peak_gbps = 0;                // its busiest sampling interval
};

// What the next readings are expected to reach. Each pair or group reading then runs at
// most a few times what that rate needs (core/reading_budget.hpp) and is cut short past
// it; 0 where no rate is known yet (the fastest pair of a round stands for it).
struct ReadingExpectation {
  double pair_gbps = 0;
  double group_busbw_gbps = 0;
};

// Of the last measure_pairs or measure_groups call: which readings ran out of their time
// budget, how long the call measured and the budget it was held to.
struct ReadingCuts {
  std::vector<bool> cut_short;  // per pair or group; empty when none was
  double seconds = 0;
  double budget_seconds = 0;
};

// What the plan asks of a cluster. Every call is made on every rank of a real job in the
// same order with the same arguments, and returns the same figures on every rank.
class ClusterProbe {
 public:
  virtual ~ClusterProbe() = default;
  virtual int nodes() const = 0;
  virtual std::string node_name(int node) const = 0;
  // Phase 1: per node, what its local checks found wrong (empty: nothing).
  virtual std::vector<std::vector<std::string>> local_findings() = 0;
  // Phase 2: per node, the busbw (GB/s) of a collective among its own ranks; nullopt where
  // a node has a single rank.
  virtual std::vector<std::optional<double>> intra_node_busbw() = 0;
  // Phase 3: the bandwidth (GB/s, each direction, both directions at once) of every pair
  // of `round`, all pairs measured at the same time.
  virtual std::vector<double> measure_pairs(const PairRound& round) = 0;
  // Phase 4: the busbw (GB/s) of one collective over each group, all groups at once.
  virtual std::vector<double> measure_groups(const std::vector<std::vector<int>>& groups) = 0;
  // Seconds since the plan began (measured or modelled), the same on every rank.
  virtual double elapsed_seconds() = 0;
  // What a node's NICs showed in the pair rounds, for its FAIL line ("eth0 fell short in 3
  // of 3 compared rounds (busiest 0.061 GB/s)"); empty when they were not read.
  virtual std::string nics_of(int /*node*/) const { return ""; }
  // Per node, what changed since the previous call besides the figures (a NIC's error
  // counter that stepped, a port's state or rate: "mlx5_0:1 symbol_error +12"); empty
  // per node when nothing did or nothing is read. The first call sets the baseline.
  virtual std::vector<std::vector<std::string>> node_changes() { return {}; }
  // Returns once elapsed_seconds() has reached `seconds` (a soak's next interval).
  virtual void wait_until(double /*seconds*/) {}
  // The rails (the ports that carry the job between nodes) of the nodes in the last pair
  // round, with what each carried; empty when the NICs were not read.
  virtual std::vector<NicReading> last_round_nics() const { return {}; }
  // The expectation the next readings' budgets come from (a probe without budgets ignores it).
  virtual void expect(const ReadingExpectation& /*expectation*/) {}
  virtual ReadingCuts last_cuts() const { return {}; }
};

// What a measurement is held against: `fraction` of an expected figure, which is given
// (a site file, the bandwidth model) or else the median of the cluster's own measurements
// of the same kind (the majority is healthy).
struct Expectations {
  std::optional<double> pair_gbps;
  std::optional<double> intra_busbw_gbps;
  std::optional<double> group_busbw_gbps;  // default: the pairs' reference
  double fraction = 0.75;
};

struct PlanSettings {
  Expectations expect;
  int pair_rounds = 3;  // rounds of phase 3 before re-tests
  std::uint64_t seed = 1;
  double time_limit_seconds = 0;  // 0: none; checked before every round and step
  bool group_collectives = true;  // phase 4
  int pairs_below = 4;            // bisection stops at groups of this many nodes
};

struct PairResult {
  int first = 0, second = 0;  // node indices, first < second
  double gbps = 0;
  bool slow = false;
  std::string phase;  // "pairs", "bisection", "re-test" or "bisection re-test", and either + " alone"
  int round = 0;      // index over every round measured, all phases
  bool cut_short = false;  // ran out of its time budget: scored from what it moved, and slow
};

struct GroupResult {
  std::vector<int> nodes;
  double busbw_gbps = 0;
  bool short_of_expected = false;
  std::string phase;  // "all nodes", "bisection"
  int step = 0;
  bool cut_short = false;  // as PairResult's
};

enum class FaultKind { node, link, group };

struct Fault {
  FaultKind kind = FaultKind::node;
  std::vector<int> nodes;  // the node; the link's two ends; the group
  std::string reason;      // measured against expected, in words
};

struct ValidationOutcome {
  std::vector<std::string> node_names;
  std::vector<std::vector<std::string>> local_findings;
  std::vector<std::optional<double>> intra_busbw;
  std::vector<PairResult> pairs;
  std::vector<GroupResult> groups;
  std::vector<Fault> faults;
  std::vector<std::string> notes;  // suspects cleared on re-test, what could not be decided
  double pair_reference_gbps = 0, pair_expected_gbps = 0;
  double intra_expected_gbps = 0, group_expected_gbps = 0;
  int pair_rounds = 0, retest_rounds = 0, bisection_steps = 0;
  int intra_measurements = 0;  // 2 when a node read low once and all were measured again
  double elapsed_seconds = 0;
  bool complete = true;
  // Bytes or elements a --check found wrong (set by the job, not the plan): exit 1.
  std::uint64_t wrong = 0;
  std::string stopped_before;  // what the time limit cut off, or the phase a signal stopped
  int interrupted_by = 0;      // SIGINT/SIGTERM that stopped the plan (exit 128 + it); 0 when none

  // Nodes to leave out of the training job: every faulty node, and one end of each
  // faulty link that no excluded node already removes (the end in most such links).
  std::vector<int> excluded_nodes() const;
  // Per node: "ok", or why it fails ("slow with all 3 partners: ..."; a link: "link to X").
  std::vector<std::string> node_verdicts() const;
  // The nodes' names folded as Slurm writes a host list: "node[03,07-08]".
  std::string host_list(const std::vector<int>& nodes) const;
};

ValidationOutcome run_validation_plan(ClusterProbe& probe, const PlanSettings& settings);

// The nodes of phase 3's first `rounds` rounds: rounds of the all-pairs schedule over the
// nodes shuffled by `seed` (every node meets a different partner in each, one idles per
// round for an odd count; 2 nodes have only 1 round).
std::vector<PairRound> validation_pair_rounds(int nodes, int rounds, std::uint64_t seed);

std::string_view name_of(FaultKind kind);  // "node", "link", "group"

}  // namespace commbench
