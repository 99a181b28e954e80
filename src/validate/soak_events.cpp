#include "commbench/validate/soak_events.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <optional>
#include <set>

#include "commbench/core/statistics.hpp"

namespace commbench {
namespace {

// A normal distribution's standard deviation over its median absolute deviation.
constexpr double kMadToSigma = 1.4826;
// A reading of nothing, as a logarithm can take it.
constexpr double kLeastGbps = 1e-9;
// A partner's low readings are as deep as another's when their medians are within this
// ratio: one throttled NIC's partners read within some tens of percent of each other.
constexpr double kAlikeDepth = 2;

// A node's low readings with one partner: their figures and the time they cover.
struct PartnerLows {
  std::vector<double> figures;
  double weight = 0;
};

bool is_low(const SoakReading& reading, const SoakLevels& levels) { return reading.gbps < levels.low_below_gbps; }

double cadence_of(const std::vector<SoakReading>& readings) {
  std::vector<double> starts;
  starts.reserve(readings.size());
  for (const SoakReading& reading : readings) starts.push_back(reading.start_s);
  return soak_cadence(starts);
}

double time_weight(const SoakReading& reading, double cadence) {
  return reading_weight(reading.end_s - reading.start_s, cadence);
}

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
                   const std::vector<std::size_t>& run, const SoakLevels& levels, const SoakRule& rule,
                   double cadence) {
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
  for (std::size_t index : run) {
    event.lowest_gbps = std::min(event.lowest_gbps, readings[index].gbps);
    event.low_weight += time_weight(readings[index], cadence);
  }
  event.depth = levels.steady_gbps > 0 ? 1 - event.lowest_gbps / levels.steady_gbps : 0;
  event.fails = event.lowest_gbps < rule.fraction * levels.steady_gbps;
  return event;
}

bool explained_by(const SoakReading& reading, const std::vector<SoakEvent>& node_events) {
  for (const SoakEvent& event : node_events)
    if (involves(reading, event.nodes.front()) && reading.interval >= event.first_interval &&
        reading.interval <= event.last_interval)
      return true;
  return false;
}

// A node's low readings with partners other than the one it was low with most, counting
// only partners about as low as the deepest one. A slow node holds every partner to its
// own rate; a slow link drags the pairs beside it down now and then, and less deep (a
// stalled process, a retransmission when its shaping changes), so those readings do not
// make its end a slow node. The deepest is taken over partners read low at least twice
// where there are any: one stalled reading of nothing must not make every other partner
// look shallow.
double readings_alike_with_others(const std::map<int, PartnerLows>& by_partner) {
  int most_partner = -1;
  double most = 0;
  for (const auto& [partner, lows] : by_partner)
    if (lows.weight > most) {
      most = lows.weight;
      most_partner = partner;
    }
  std::optional<double> deepest;
  for (const bool repeated_only : {true, false}) {
    for (const auto& [partner, lows] : by_partner) {
      if (repeated_only && lows.weight < 2) continue;
      const double typical = median_of(lows.figures);
      deepest = deepest ? std::min(*deepest, typical) : typical;
    }
    if (deepest) break;
  }
  double alike = 0;
  for (const auto& [partner, lows] : by_partner)
    if (partner != most_partner && median_of(lows.figures) <= kAlikeDepth * std::max(deepest.value_or(0), kLeastGbps))
      alike += lows.weight;
  return alike;
}

// A node's runs of low readings that the events found so far do not explain, with the
// rule's least number of readings and at least two of them alike in depth with others
// than the partner it was low with most.
std::vector<SoakEvent> node_candidates(const std::vector<SoakReading>& readings, int node,
                                       const std::vector<SoakEvent>& found, const SoakLevels& levels,
                                       const SoakRule& rule) {
  std::vector<std::size_t> series;
  for (std::size_t i = 0; i < readings.size(); ++i)
    if (involves(readings[i], node)) series.push_back(i);
  const auto unexplained = [&](const SoakReading& reading) { return !explained_by(reading, found); };
  const double cadence = cadence_of(readings);
  std::vector<SoakEvent> candidates;
  for (const std::vector<std::size_t>& run : low_runs(readings, series, levels, unexplained)) {
    std::map<int, PartnerLows> by_partner;
    for (std::size_t index : run) {
      PartnerLows& lows = by_partner[partner_of(readings[index], node)];
      lows.figures.push_back(readings[index].gbps);
      lows.weight += time_weight(readings[index], cadence);
    }
    SoakEvent event = event_of(FaultKind::node, {node}, readings, run, levels, rule, cadence);
    if (event.low_weight < rule.least_node_readings || readings_alike_with_others(by_partner) < 2) continue;
    std::vector<double> low;
    for (const auto& [partner, lows] : by_partner) {
      event.partners.push_back(partner);
      low.insert(low.end(), lows.figures.begin(), lows.figures.end());
    }
    event.median_low_gbps = median_of(low);
    candidates.push_back(std::move(event));
  }
  return candidates;
}

// Whether a candidate is the wake of another slow node: at the same time, and far less deep
// throughout. A throttled node's rounds slow the pairs that run beside them too (a shared
// bridge, CPUs busy with its retransmissions), but not to its depth.
bool in_the_wake_of(const SoakEvent& candidate, const std::vector<SoakEvent>& others) {
  for (const SoakEvent& other : others)
    if (&other != &candidate && candidate.first_interval <= other.last_interval &&
        other.first_interval <= candidate.last_interval &&
        candidate.median_low_gbps > kAlikeDepth * std::max(other.median_low_gbps, kLeastGbps))
      return true;
  return false;
}

// Node events, the strongest first: a slow node drags each partner's reading down too, so
// once the node with the most low readings (the deepest throughout, between equals) is
// named, its partners' readings with it are explained and no longer count towards a node
// event of their own. A node in another's wake is none.
std::vector<SoakEvent> node_events(const std::vector<SoakReading>& readings, int nodes, const SoakLevels& levels,
                                   const SoakRule& rule) {
  std::vector<SoakEvent> found;
  for (;;) {
    std::vector<SoakEvent> candidates;
    for (int node = 0; node < nodes; ++node)
      for (SoakEvent& candidate : node_candidates(readings, node, found, levels, rule))
        candidates.push_back(std::move(candidate));
    const SoakEvent* strongest = nullptr;
    for (const SoakEvent& candidate : candidates) {
      if (in_the_wake_of(candidate, found) || in_the_wake_of(candidate, candidates)) continue;
      if (strongest == nullptr || candidate.low_weight > strongest->low_weight ||
          (candidate.low_weight == strongest->low_weight && candidate.median_low_gbps < strongest->median_low_gbps))
        strongest = &candidate;
    }
    if (strongest == nullptr) return found;
    found.push_back(*strongest);
  }
}

// Link events: low readings of one pair in its own series that no node event of either
// end explains (such a reading counts as one that is not low).
std::vector<SoakEvent> link_events(const std::vector<SoakReading>& readings, const std::vector<SoakEvent>& by_node,
                                   const SoakLevels& levels, const SoakRule& rule) {
  std::map<std::pair<int, int>, std::vector<std::size_t>> series;
  for (std::size_t i = 0; i < readings.size(); ++i) series[{readings[i].first, readings[i].second}].push_back(i);
  // While a node event lasts, no pair of its rounds is judged a link: a slow node slows the
  // pairs beside it now and then (a shared core, an uplink), as a throttled one did on the
  // test cluster. A second slow node is still found: node events do not wait for this.
  const auto during_node_event = [&](const SoakReading& reading) {
    for (const SoakEvent& event : by_node)
      if (reading.interval >= event.first_interval && reading.interval <= event.last_interval) return true;
    return false;
  };
  const auto unexplained = [&](const SoakReading& reading) {
    return !explained_by(reading, by_node) && !during_node_event(reading);
  };
  const double cadence = cadence_of(readings);
  std::vector<SoakEvent> events;
  for (const auto& [pair, indices] : series)
    for (const std::vector<std::size_t>& run : low_runs(readings, indices, levels, unexplained)) {
      SoakEvent event = event_of(FaultKind::link, {pair.first, pair.second}, readings, run, levels, rule, cadence);
      if (event.low_weight >= rule.least_link_readings) events.push_back(std::move(event));
    }
  return events;
}

void attach_changes(SoakEvent& event, const std::vector<SoakChange>& changes) {
  for (const SoakChange& change : changes)
    if (change.interval >= event.first_interval - 1 && change.interval <= event.last_interval + 1 &&
        std::find(event.nodes.begin(), event.nodes.end(), change.node) != event.nodes.end())
      event.changes.push_back(change.what);
}

}  // namespace

// The time a reading covers is counted in cadences: a fault makes fewer readings the worse
// it is (one round held up for 15 s is one reading), so readings alone would hide the
// deepest dips.
double soak_cadence(const std::vector<double>& starts) {
  const std::set<double> distinct(starts.begin(), starts.end());
  std::vector<double> steps;
  for (auto it = distinct.begin(); it != distinct.end() && std::next(it) != distinct.end(); ++it)
    steps.push_back(*std::next(it) - *it);
  return steps.empty() ? 0 : median_of(steps);
}

double reading_weight(double length_s, double cadence_s) {
  // A reading this many cadences long or longer is held up by what it measures, not by a
  // process stalled for a moment.
  constexpr double kLongReading = 3;
  return cadence_s > 0 && length_s >= kLongReading * cadence_s ? length_s / cadence_s : 1.0;
}

SoakLevels soak_levels(const std::vector<SoakReading>& readings, const SoakRule& rule) {
  std::vector<double> values;
  values.reserve(readings.size());
  for (const SoakReading& reading : readings) values.push_back(reading.gbps);
  return soak_levels(values, rule);
}

std::vector<Dip> dips_in(const std::vector<double>& series, double low_below) {
  std::vector<SoakReading> readings;
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < series.size(); ++i) {
    readings.push_back({static_cast<int>(i), 0, 0, 0, 1, series[i]});
    order.push_back(i);
  }
  SoakLevels levels;
  levels.low_below_gbps = low_below;
  std::vector<Dip> dips;
  for (const std::vector<std::size_t>& run :
       low_runs(readings, order, levels, [](const SoakReading&) { return true; })) {
    Dip dip{run.front(), run.back(), static_cast<int>(run.size()), series[run.front()]};
    for (std::size_t index : run) dip.lowest = std::min(dip.lowest, series[index]);
    dips.push_back(dip);
  }
  return dips;
}

SoakLevels soak_levels(const std::vector<double>& values, const SoakRule& rule) {
  SoakLevels levels;
  if (values.empty()) return levels;
  // In logarithms: a fabric's scatter and a throttled link's loss are both ratios.
  std::vector<double> logs;
  logs.reserve(values.size());
  for (double value : values) logs.push_back(std::log(std::max(value, kLeastGbps)));
  const double median = median_of(logs);
  levels.given = rule.steady_gbps.has_value();
  levels.steady_gbps = rule.steady_gbps.value_or(std::exp(median));
  std::vector<double> deviations;
  deviations.reserve(logs.size());
  for (double value : logs) deviations.push_back(std::abs(value - median));
  levels.spread = kMadToSigma * median_of(deviations);
  const double margin = std::max(rule.spread_limit * levels.spread, -std::log(1 - rule.least_depth));
  levels.low_below_gbps = levels.steady_gbps * std::exp(-margin);
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
