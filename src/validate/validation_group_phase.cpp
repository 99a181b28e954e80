// The group phase of the validation plan: one collective over every node, bisected when
// it falls short, to name the smallest groups that stay short.

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "commbench/core/interrupted.hpp"
#include "commbench/core/profile_range.hpp"
#include "commbench/core/statistics.hpp"
#include "plan_run.hpp"

namespace commbench::plan_detail {

std::vector<double> PlanRun::measure_groups(const std::vector<std::vector<int>>& groups, const std::string& phase) {
  const ProfileRange range([&] { return fmt::format("{}: {} node groups", phase, groups.size()); });
  const std::vector<double> busbw = probe_.measure_groups(groups);
  const ReadingCuts cuts = probe_.last_cuts();
  // A group cut short at its budget moved less than a third of its expected rate (it had
  // three times the time that rate needs), so its figure alone says it is short.
  for (std::size_t i = 0; i < groups.size(); ++i)
    outcome_.groups.push_back({groups[i], busbw[i], busbw[i] < outcome_.group_expected_gbps, phase,
                               outcome_.bisection_steps, i < cuts.cut_short.size() && cuts.cut_short[i]});
  return busbw;
}

void PlanRun::group_phase() {
  if (!settings_.group_collectives || node_count() < 2) return;
  const std::vector<int> excluded = outcome_.excluded_nodes();
  std::vector<int> active;
  for (int node = 0; node < node_count(); ++node)
    if (!std::binary_search(excluded.begin(), excluded.end(), node)) active.push_back(node);
  if (active.size() < 2) return;
  const double reference = settings_.expect.group_busbw_gbps.value_or(outcome_.pair_reference_gbps);
  if (reference <= 0) return;
  outcome_.group_expected_gbps = settings_.expect.fraction * reference;
  probe_.expect({outcome_.pair_reference_gbps, reference});
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

void PlanRun::bisect(const std::vector<int>& group, double busbw) {
  using Searched = SearchedGroup;
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
    require_time(fmt::format("bisection step {}", outcome_.bisection_steps + 1));
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
      require_time(fmt::format("bisection step {}", outcome_.bisection_steps + 1));
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

void PlanRun::test_small_groups(const std::vector<SearchedGroup>& groups) {
  std::vector<PairRound> rounds;
  for (const SearchedGroup& group : groups) {
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
    require_time(fmt::format("bisection step {}", outcome_.bisection_steps + 1));
    const std::vector<PairResult> measured = measure_round(round, "bisection");
    results.insert(results.end(), measured.begin(), measured.end());
    ++outcome_.bisection_steps;
  }
  const std::size_t faults_before = outcome_.faults.size();
  resolve_suspects(results, "bisection re-test");
  for (const SearchedGroup& group : groups) {
    const bool explained = std::any_of(outcome_.faults.begin() + static_cast<long>(faults_before), outcome_.faults.end(),
                                       [&](const Fault& fault) {
                                         return std::all_of(fault.nodes.begin(), fault.nodes.end(), [&](int node) {
                                           return std::binary_search(group.nodes.begin(), group.nodes.end(), node);
                                         });
                                       });
    if (!explained) report_group(group.nodes, group.busbw, "every pair of it passes");
  }
}

void PlanRun::report_group(const std::vector<int>& nodes, double busbw, const std::string& why) {
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

}  // namespace commbench::plan_detail
