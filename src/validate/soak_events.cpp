#include "commbench/validate/soak_events.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "commbench/core/statistics.hpp"

namespace commbench {
namespace {

// A normal distribution's standard deviation over its median absolute deviation.
constexpr double kMadToSigma = 1.4826;

bool is_low(const SoakReading& reading, const SoakLevels& levels) { return reading.gbps < levels.low_below_gbps; }

bool involves(const SoakReading& reading, int node) { return reading.first == node || reading.second == node; }

int partner_of(const SoakReading& reading, int node) { return reading.first == node ? reading.second : reading.first; }

// Runs of low readings within one series (indices into `readings`, the low ones only).
// One reading that is not low between two low ones does not end a run: a dip's figures
// scatter too, and one of them just above the line is no recovery. `counts` says which
// readings may be in a run at all.
template <typename Counts>
std::vector<std::vector<std::size_t>> low_runs(const std::vector<SoakReading>& readings,
                                               const std::vector<std::size_t>& series, const SoakLevels& levels,
                                               Counts counts) {
  std::vector<std::vector<std::size_t>> runs;
  std::vector<std::size_t> run;
  int since_low = 0;
  for (std::size_t index : series) {
    if (is_low(readings[index], levels) && counts(readings[index])) {
      run.push_back(index);
      since_low = 0;
    } else if (!run.empty() && ++since_low >= 2) {
      runs.push_back(std::move(run));
      run.clear();
    }
  }
  if (!run.empty()) runs.push_back(std::move(run));
  return runs;
}

SoakEvent event_of(FaultKind kind, std::vector<int> nodes, const std::vector<SoakReading>& readings,
                   const std::vector<std::size_t>& run, const SoakLevels& levels, const SoakRule& rule) {
  SoakEvent event;
  event.kind = kind;
  event.nodes = std::move(nodes);
  const SoakReading& first = readings[run.front()];
  const SoakReading& last = readings[run.back()];
  event.first_interval = first.interval;
  event.last_interval = last.interval;
  event.start_s = first.start_s;
  event.end_s = last.end_s;
  event.low_readings = static_cast<int>(run.size());
  event.lowest_gbps = first.gbps;
  for (std::size_t index : run) event.lowest_gbps = std::min(event.lowest_gbps, readings[index].gbps);
  event.depth = levels.steady_gbps > 0 ? 1 - event.lowest_gbps / levels.steady_gbps : 0;
  event.fails = event.lowest_gbps < rule.fraction * levels.steady_gbps;
  return event;
}

// Node events: a node low with at least two different partners in a row of its series.
std::vector<SoakEvent> node_events(const std::vector<SoakReading>& readings, int nodes, const SoakLevels& levels,
                                   const SoakRule& rule) {
  std::vector<SoakEvent> events;
  for (int node = 0; node < nodes; ++node) {
    std::vector<std::size_t> series;
    for (std::size_t i = 0; i < readings.size(); ++i)
      if (involves(readings[i], node)) series.push_back(i);
    for (const std::vector<std::size_t>& run :
         low_runs(readings, series, levels, [](const SoakReading&) { return true; })) {
      std::set<int> partners;
      for (std::size_t index : run) partners.insert(partner_of(readings[index], node));
      if (partners.size() < 2) continue;
      SoakEvent event = event_of(FaultKind::node, {node}, readings, run, levels, rule);
      event.partners.assign(partners.begin(), partners.end());
      events.push_back(std::move(event));
    }
  }
  return events;
}

bool explained_by(const SoakReading& reading, const std::vector<SoakEvent>& node_events) {
  for (const SoakEvent& event : node_events)
    if (involves(reading, event.nodes.front()) && reading.interval >= event.first_interval &&
        reading.interval <= event.last_interval)
      return true;
  return false;
}

// Link events: low readings of one pair in its own series that no node event of either
// end explains (such a reading counts as one that is not low).
std::vector<SoakEvent> link_events(const std::vector<SoakReading>& readings, const std::vector<SoakEvent>& by_node,
                                   const SoakLevels& levels, const SoakRule& rule) {
  std::map<std::pair<int, int>, std::vector<std::size_t>> series;
  for (std::size_t i = 0; i < readings.size(); ++i) series[{readings[i].first, readings[i].second}].push_back(i);
  const auto unexplained = [&](const SoakReading& reading) { return !explained_by(reading, by_node); };
  std::vector<SoakEvent> events;
  for (const auto& [pair, indices] : series)
    for (const std::vector<std::size_t>& run : low_runs(readings, indices, levels, unexplained))
      events.push_back(event_of(FaultKind::link, {pair.first, pair.second}, readings, run, levels, rule));
  return events;
}

void attach_changes(SoakEvent& event, const std::vector<SoakChange>& changes) {
  for (const SoakChange& change : changes)
    if (change.interval >= event.first_interval - 1 && change.interval <= event.last_interval + 1 &&
        std::find(event.nodes.begin(), event.nodes.end(), change.node) != event.nodes.end())
      event.changes.push_back(change.what);
}

}  // namespace

SoakLevels soak_levels(const std::vector<SoakReading>& readings, const SoakRule& rule) {
  SoakLevels levels;
  std::vector<double> values;
  values.reserve(readings.size());
  for (const SoakReading& reading : readings) values.push_back(reading.gbps);
  if (values.empty()) return levels;
  const double median = median_of(values);
  levels.given = rule.steady_gbps.has_value();
  levels.steady_gbps = rule.steady_gbps.value_or(median);
  std::vector<double> deviations;
  deviations.reserve(values.size());
  for (double value : values) deviations.push_back(std::abs(value - median));
  levels.spread_gbps = kMadToSigma * median_of(deviations);
  const double margin = std::max(rule.spread_limit * levels.spread_gbps, rule.least_depth * levels.steady_gbps);
  levels.low_below_gbps = levels.steady_gbps - margin;
  return levels;
}

std::vector<SoakEvent> find_soak_events(const std::vector<SoakReading>& readings,
                                        const std::vector<SoakChange>& changes, const SoakLevels& levels,
                                        const SoakRule& rule) {
  int nodes = 0;
  for (const SoakReading& reading : readings) nodes = std::max(nodes, reading.second + 1);
  std::vector<SoakEvent> events = node_events(readings, nodes, levels, rule);
  for (SoakEvent& event : link_events(readings, events, levels, rule)) events.push_back(std::move(event));
  for (SoakEvent& event : events) attach_changes(event, changes);
  std::stable_sort(events.begin(), events.end(), [](const SoakEvent& a, const SoakEvent& b) {
    return a.first_interval != b.first_interval ? a.first_interval < b.first_interval : a.nodes < b.nodes;
  });
  return events;
}

}  // namespace commbench
