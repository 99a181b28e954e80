#include "commbench/analysis/job_cluster_probe.hpp"

#include <thread>

#include <algorithm>
#include <limits>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "commbench/backend/typed_exchange.hpp"
#include "commbench/analysis/live_probe.hpp"
#include "commbench/core/collective_descriptor.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/interrupted.hpp"
#include "commbench/core/op_case.hpp"
#include "commbench/core/size.hpp"
#include "commbench/core/stopping_rule.hpp"
#include "commbench/p2p/rail_schedule.hpp"
#include "commbench/runner/collective_buffers.hpp"
#include "commbench/runner/collective_workload.hpp"
#include "commbench/runner/interruption.hpp"
#include "commbench/runner/measurement.hpp"
#include "commbench/runner/peer_round_workload.hpp"
#include "commbench/topology/gpu_nics.hpp"
#include "commbench/topology/node_comparison.hpp"
#include "commbench/topology/node_probe.hpp"
#include "commbench/topology/topology_fields.hpp"
#include "commbench/topology/topology_json.hpp"
#include "commbench/validate/site_expectations.hpp"

namespace commbench {

JobClusterProbe::JobClusterProbe(JobSteps& session, Backend& backend, ProbeMeasurement measurement)
    : session_(session), backend_(backend), measurement_(std::move(measurement)) {
  Bootstrap& group = backend_.group();
  NodeRanks nodes = group_ranks_by_node(group.hostnames());
  node_names_ = std::move(nodes.hosts);
  node_ranks_ = std::move(nodes.ranks);
  own_node_ =
      static_cast<int>(std::find(node_names_.begin(), node_names_.end(), group.hostname()) - node_names_.begin());
  // Across nodes, the pair rounds say which NIC carried a slow node's traffic; the
  // threshold is bench-collectives' default.
  nic_watch_ = std::make_unique<NicWatch>(group, node_names_.size() > 1, 0.7);
  auto guard = session_.watchdog().guard("starting the plan's clock");
  group.barrier();
  started_ = std::chrono::steady_clock::now();
}

std::string JobClusterProbe::nics_of(int node) const {
  return nic_watch_->rails_of_node(node_names_[static_cast<std::size_t>(node)]);
}

double JobClusterProbe::elapsed_seconds() {
  const double own = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  auto guard = session_.watchdog().guard("agreeing on the plan's clock");
  return backend_.group().max(own);  // every rank takes the same decision at the limit
}

void JobClusterProbe::wait_until(double seconds) {
  // From the agreed clock, so every rank sleeps as long and meets the next round together.
  const double left = seconds - elapsed_seconds();
  if (left > 0) sleep_unless_interrupted(left);
}

std::vector<std::vector<std::string>> JobClusterProbe::node_changes() {
  Bootstrap& group = backend_.group();
  std::vector<std::string> mine;
  if (group.local_rank() == 0) {
    NicHealthSnapshot now = read_nic_health();
    if (health_)
      for (const std::string& change : nic_health_changes(*health_, now)) mine.push_back(change);
    health_ = std::move(now);
    if (!gpu_monitor_) gpu_monitor_ = std::make_unique<GpuHealthMonitor>();
    GpuHealthSnapshot gpus = gpu_monitor_->read();
    if (gpu_health_)
      for (const std::string& change : gpu_health_changes(*gpu_health_, gpus)) mine.push_back(change);
    gpu_health_ = std::move(gpus);
  }
  std::vector<std::vector<std::string>> all;
  {
    auto guard = session_.watchdog().guard("gathering the NICs' error counters");
    all = all_gather_as(group, mine);
  }
  std::vector<std::vector<std::string>> changes(node_names_.size());
  for (std::size_t node = 0; node < node_ranks_.size(); ++node)
    for (int rank : node_ranks_[node])
      for (const std::string& change : all[static_cast<std::size_t>(rank)]) changes[node].push_back(change);
  return changes;
}

std::vector<double> JobClusterProbe::gather_from(double own, const std::vector<int>& owners, const std::string& what,
                                                 int signal) {
  std::vector<std::pair<double, int>> all;
  {
    auto guard = session_.watchdog().guard(what);
    all = all_gather_as(backend_.group(), std::pair{own, signal});
  }
  int agreed = 0;
  for (const auto& [figure, rank_signal] : all) agreed = std::max(agreed, rank_signal);
  if (agreed != 0) throw Interrupted(agreed);
  std::vector<double> figures;
  for (const int owner : owners) figures.push_back(all[static_cast<std::size_t>(owner)].first);
  return figures;
}

ReadingBudget JobClusterProbe::budget_of(double expected_seconds, bool takes_part) const {
  ReadingBudget budget;
  budget.planned_iterations = planned_iterations();
  budget.expected_iteration_seconds = expected_seconds;
  budget.takes_part = takes_part;
  return budget;
}

double JobClusterProbe::subgroup_busbw(Backend* backend, double idle, int& signal,
                                       const std::optional<ReadingBudget>& budget, bool& cut) {
  if (backend == nullptr) return idle;
  try {
    return allreduce_busbw(*backend, budget, cut);
  } catch (const Interrupted& stop) {
    signal = stop.signal_number();
    return idle;
  }
}

std::vector<std::vector<std::string>> JobClusterProbe::local_findings() {
  Bootstrap& group = backend_.group();
  // One rank per node probes (the same node for all its ranks), as bench-topology does.
  std::optional<NodeTopology> own_model;
  std::string failure;
  if (group.local_rank() == 0) {
    auto guard = session_.watchdog().guard("probing this node's topology");
    try {
      NodeTopology node = probe_node(probe_options_for_this_build("", "", ""));
      node.hostname = group.hostname();
      own_model = std::move(node);
    } catch (const Error& e) {
      failure = std::string("topology probe failed: ") + e.what();
    }
  }
  std::vector<std::optional<NodeTopology>> models;
  std::vector<std::string> failures;
  {
    auto guard = session_.watchdog().guard("gathering the nodes' topologies");
    models = all_gather_as(group, own_model);
    failures = all_gather_as(group, failure);
  }
  std::vector<std::vector<std::string>> findings(node_names_.size());
  std::vector<NodeTopology> probed;
  std::vector<int> probed_node;
  for (std::size_t node = 0; node < node_names_.size(); ++node) {
    const auto leader = static_cast<std::size_t>(node_ranks_[node].front());
    if (!failures[leader].empty()) {
      findings[node].push_back(failures[leader]);
      continue;
    }
    probed.push_back(topology_as_written(models[leader].value(), "the topology of " + node_names_[node]));
    probed_node.push_back(static_cast<int>(node));
    nic_watch_->name_nearest_gpus(gpus_nearest_each_nic(probed.back()), node_names_[node]);
    for (const std::string& found : node_findings(probed.back())) findings[node].push_back(found);
    std::vector<NamedValue> facts;
    for (const NodeFact& fact : node_facts(probed.back())) facts.push_back({fact.key, fact.value});
    for (const std::string& unmet : unmet_facts(facts, measurement_.expected_facts)) findings[node].push_back(unmet);
  }
  // Without a site file, the majority of the nodes is the expectation.
  if (measurement_.expected_facts.empty()) {
    for (const NodeDifference& difference : compare_nodes(probed))
      for (std::size_t k = 0; k < probed.size(); ++k)
        if (probed[k].hostname == difference.hostname)
          findings[static_cast<std::size_t>(probed_node[k])].push_back(describe(difference));
  }
  return findings;
}

double JobClusterProbe::allreduce_busbw(Backend& backend, const std::optional<ReadingBudget>& budget, bool& cut) {
  PlanRequest request;
  request.ops = {Collective::allreduce};
  request.dtypes = {DataType::float32};
  request.redops = {ReduceOp::sum};
  request.placements = {Placement::out_of_place};
  request.sizes = {measurement_.collective_bytes};
  request.ranks = backend.ranks();
  const std::vector<OpCase> plan = build_plan(request);
  CollectiveBuffers buffers(backend);
  {
    auto guard = session_.watchdog().guard("allocating the allreduce's buffers");
    buffers.allocate_for(plan);
  }
  CollectiveWorkload workload(backend, buffers, plan.front());
  const FixedCountCriterion criterion(measurement_.iterations);
  MeasurementSettings settings;
  settings.warmup_iterations = measurement_.warmup;
  settings.check = measurement_.check;
  settings.budget = budget;
  MeasurementLoop loop(backend.group(), criterion, settings, &session_.watchdog());
  const Measurement measured = loop.measure(workload);
  wrong_ += measured.wrong.value_or(0);
  cut = measured.cut_short;
  const double seconds = measured.slowest_seconds;
  if (!(seconds > 0)) return 0;
  return static_cast<double>(plan.front().send_bytes()) / seconds / 1e9 *
         descriptor_of(Collective::allreduce).bus_bandwidth_factor(backend.ranks());
}

std::vector<std::optional<double>> JobClusterProbe::intra_node_busbw() {
  std::unique_ptr<Backend> node_backend;
  {
    auto guard = session_.watchdog().guard("splitting the job into its nodes");
    node_backend = backend_.split(own_node_, backend_.group().rank());
  }
  const bool measured = node_ranks_[static_cast<std::size_t>(own_node_)].size() > 1;
  int signal = 0;
  bool cut = false;  // the intra-node collectives have no budget
  const double own = subgroup_busbw(measured ? node_backend.get() : nullptr, -1, signal, std::nullopt, cut);
  std::vector<int> leaders;
  for (const std::vector<int>& ranks : node_ranks_) leaders.push_back(ranks.front());
  std::vector<std::optional<double>> figures;
  for (const double figure : gather_from(own, leaders, "gathering the intra-node figures", signal))
    figures.push_back(figure < 0 ? std::nullopt : std::optional<double>(figure));
  return figures;
}

void JobClusterProbe::keep_rails(const std::vector<NodeNic>& nics) {
  last_nics_.clear();
  for (const NodeNic& nic : nics) {
    const auto node = std::find(node_names_.begin(), node_names_.end(), nic.node);
    if (!nic.rail || node == node_names_.end()) continue;
    last_nics_.push_back({static_cast<int>(node - node_names_.begin()),
                          nic_label(nic.traffic.device, nic.traffic.port, nic.traffic.rdma),
                          nic.traffic.known() ? std::optional<std::uint64_t>(nic.traffic.bytes()) : std::nullopt,
                          nic.seconds, nic.peak_bytes_per_second / 1e9});
  }
}

std::vector<double> JobClusterProbe::measure_pairs(const PairRound& round) {
  // Rail by rail: local rank i of one node with local rank i of the other.
  std::vector<std::pair<int, int>> rank_pairs;
  std::vector<std::vector<std::pair<int, int>>> rails_of(round.size());
  for (std::size_t k = 0; k < round.size(); ++k) {
    const auto& a = node_ranks_[static_cast<std::size_t>(round[k].first)];
    const auto& b = node_ranks_[static_cast<std::size_t>(round[k].second)];
    for (std::size_t rail = 0; rail < std::min(a.size(), b.size()); ++rail) {
      rank_pairs.push_back({a[rail], b[rail]});
      rails_of[k].push_back(rank_pairs.back());
    }
  }
  const PeerRound transfers = PeerRound::both_ways(rank_pairs, backend_.ranks());
  PeerRoundWorkload workload(
      backend_, transfers, measurement_.pair_bytes,
      fmt::format("pair round of {} node pairs, {}", round.size(), format_size(measurement_.pair_bytes)));
  const FixedCountCriterion criterion(measurement_.iterations);
  MeasurementSettings settings;
  settings.warmup_iterations = measurement_.warmup;
  settings.check = measurement_.check;
  settings.gather_rank_means = true;
  const Bootstrap& group = backend_.group();
  const bool takes_part = std::any_of(rank_pairs.begin(), rank_pairs.end(), [&](const std::pair<int, int>& pair) {
    return pair.first == group.rank() || pair.second == group.rank();
  });
  if (expectation_)
    settings.budget = budget_of(expectation_->pair_gbps > 0 ? static_cast<double>(measurement_.pair_bytes) /
                                                                  (expectation_->pair_gbps * 1e9)
                                                            : std::numeric_limits<double>::infinity(),
                                takes_part);
  MeasurementLoop loop(backend_.group(), criterion, settings, &session_.watchdog());
  nic_watch_->start_case();
  const Measurement measured = loop.measure(workload);
  {
    auto guard = session_.watchdog().guard("gathering the NIC counters of a pair round");
    std::set<std::string> taking_part;
    for (const RankPair& pair : round) {
      taking_part.insert(node_names_[static_cast<std::size_t>(pair.first)]);
      taking_part.insert(node_names_[static_cast<std::size_t>(pair.second)]);
    }
    keep_rails(nic_watch_->finish(fmt::format("pair round {}", ++pair_rounds_), taking_part));
  }
  wrong_ += measured.wrong.value_or(0);
  std::vector<double> gbps;
  last_cuts_ = {{}, measured.elapsed_seconds, measured.budget_seconds};
  for (const auto& rails : rails_of) {
    double slowest = -1, longest_seconds = 0;
    for (const auto& [first, second] : rails) {
      // A transfer takes as long as the slower of its two ranks needed. Cut short, the
      // means are over every iteration moved: the rate is what moved in the time it took.
      const double seconds = std::max(measured.rank_mean_seconds[static_cast<std::size_t>(first)],
                                      measured.rank_mean_seconds[static_cast<std::size_t>(second)]);
      const double rate = moved_gbps(measurement_.pair_bytes, 1, seconds);
      slowest = slowest < 0 ? rate : std::min(slowest, rate);
      longest_seconds = std::max(longest_seconds, seconds);
    }
    gbps.push_back(std::max(slowest, 0.0));
    // Of a round cut short, the pairs whose pace would have overrun the budget ran out of
    // it; the others were stopped with them, on time.
    last_cuts_.cut_short.push_back(measured.cut_short &&
                                   longest_seconds * static_cast<double>(planned_iterations()) >
                                       measured.budget_seconds);
  }
  return gbps;
}

std::vector<double> JobClusterProbe::measure_groups(const std::vector<std::vector<int>>& groups) {
  int own_group = static_cast<int>(groups.size());  // idle ranks share one colour
  for (std::size_t g = 0; g < groups.size(); ++g)
    if (std::binary_search(groups[g].begin(), groups[g].end(), own_node_)) own_group = static_cast<int>(g);
  std::unique_ptr<Backend> group_backend;
  {
    auto guard = session_.watchdog().guard("splitting the job into node groups");
    group_backend = backend_.split(own_group, backend_.group().rank());
  }
  int signal = 0;
  bool cut = false;
  std::optional<ReadingBudget> budget;
  if (own_group < static_cast<int>(groups.size()) && expectation_ && expectation_->group_busbw_gbps > 0) {
    // The time an allreduce at the expected busbw takes over this group's ranks.
    const int ranks = group_backend->ranks();
    const double factor = descriptor_of(Collective::allreduce).bus_bandwidth_factor(ranks);
    budget = budget_of(static_cast<double>(measurement_.collective_bytes) * factor /
                           (expectation_->group_busbw_gbps * 1e9),
                       true);
  }
  const double own = subgroup_busbw(own_group < static_cast<int>(groups.size()) ? group_backend.get() : nullptr, 0,
                                    signal, budget, cut);
  std::vector<int> owners;
  for (const std::vector<int>& group : groups)
    owners.push_back(node_ranks_[static_cast<std::size_t>(group.front())].front());
  const std::vector<double> cut_flags =
      gather_from(cut ? 1.0 : 0.0, owners, "gathering the node groups' budgets", 0);
  std::vector<double> busbw = gather_from(own, owners, "gathering the node groups' figures", signal);
  last_cuts_ = {};
  for (const double flag : cut_flags) last_cuts_.cut_short.push_back(flag > 0);
  return busbw;
}

}  // namespace commbench
