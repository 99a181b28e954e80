#include "commbench/validate/validation_plan.hpp"

#include <algorithm>
#include <array>
#include <numeric>
#include <random>
#include <set>

#include <fmt/format.h>

#include "commbench/core/interrupted.hpp"
#include "commbench/core/name_lookup.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/core/profile_range.hpp"
#include "commbench/core/statistics.hpp"
#include "commbench/validate/hostlist.hpp"
#include "plan_run.hpp"

namespace commbench {
namespace plan_detail {

std::string gbps_text(double gbps) { return significant_text(gbps, 3) + " GB/s"; }

RankPair ordered(int a, int b) { return a < b ? RankPair{a, b} : RankPair{b, a}; }

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

ValidationOutcome PlanRun::run() {
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

void PlanRun::require_time(const std::string& next) {
  phase_ = next;
  if (settings_.time_limit_seconds > 0 && probe_.elapsed_seconds() >= settings_.time_limit_seconds)
    throw TimeUp{next};
}

void PlanRun::add_fault(FaultKind kind, std::vector<int> nodes, std::string reason) {
  std::sort(nodes.begin(), nodes.end());
  if (kind == FaultKind::node) faulty_.insert(nodes.front());
  outcome_.faults.push_back({kind, std::move(nodes), std::move(reason)});
}

void PlanRun::local_checks() {
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

void PlanRun::intra_node_collectives() {
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

}  // namespace plan_detail

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
      pairs.push_back(plan_detail::ordered(shuffled[static_cast<std::size_t>(a)], shuffled[static_cast<std::size_t>(b)]));
    std::sort(pairs.begin(), pairs.end());
    result.push_back(std::move(pairs));
  }
  return result;
}

ValidationOutcome run_validation_plan(ClusterProbe& probe, const PlanSettings& settings) {
  return plan_detail::PlanRun(probe, settings).run();
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
  using Named = detail::NamedValue<FaultKind>;
  static constexpr std::array kNames{Named{"node", FaultKind::node}, Named{"link", FaultKind::link},
                                     Named{"group", FaultKind::group}};
  return detail::name_in<FaultKind>(kNames, kind);
}

}  // namespace commbench
