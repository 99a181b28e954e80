#include "commbench/validate/soak_run.hpp"

#include <algorithm>

#include "commbench/core/interrupted.hpp"

namespace commbench {
namespace {

// The failing events as the plan's faults, so the exclude list is decided by the same
// rule as bench-validate's.
ValidationOutcome as_faults(const SoakOutcome& soak) {
  ValidationOutcome outcome;
  outcome.node_names = soak.node_names;
  for (const SoakEvent& event : soak.events)
    if (event.fails) outcome.faults.push_back({event.kind, event.nodes, ""});
  return outcome;
}

SoakInterval measure_interval(ClusterProbe& probe, const PairRound& round, int index, double start_s) {
  SoakInterval interval;
  interval.index = index;
  interval.start_s = start_s;
  const std::vector<double> gbps = probe.measure_pairs(round);
  interval.nics = probe.last_round_nics();
  const std::vector<std::vector<std::string>> changes = probe.node_changes();
  interval.end_s = probe.elapsed_seconds();
  for (std::size_t k = 0; k < round.size() && k < gbps.size(); ++k)
    interval.readings.push_back({index, start_s, interval.end_s, std::min(round[k].first, round[k].second),
                                 std::max(round[k].first, round[k].second), gbps[k]});
  for (std::size_t node = 0; node < changes.size(); ++node)
    for (const std::string& what : changes[node]) interval.changes.push_back({index, static_cast<int>(node), what});
  return interval;
}

}  // namespace

std::vector<int> SoakOutcome::excluded_nodes() const { return as_faults(*this).excluded_nodes(); }

std::string SoakOutcome::exclude_line() const {
  const ValidationOutcome outcome = as_faults(*this);
  const std::vector<int> excluded = outcome.excluded_nodes();
  return excluded.empty() ? "" : "--exclude=" + outcome.host_list(excluded);
}

SoakOutcome run_soak(ClusterProbe& probe, const SoakSettings& settings, const SoakIntervalSink& on_interval) {
  SoakOutcome outcome;
  for (int node = 0; node < probe.nodes(); ++node) outcome.node_names.push_back(probe.node_name(node));
  // Every round of the all-pairs schedule: a cycle meets every pair once.
  const std::vector<PairRound> rounds = validation_pair_rounds(probe.nodes(), probe.nodes(), settings.seed);
  outcome.schedule_rounds = static_cast<int>(rounds.size());
  try {
    probe.node_changes();  // the counters' baseline
    for (double start = probe.elapsed_seconds(); !rounds.empty() && start < settings.duration_s;) {
      const PairRound& round = rounds[static_cast<std::size_t>(outcome.intervals) % rounds.size()];
      SoakInterval interval = measure_interval(probe, round, outcome.intervals, start);
      ++outcome.intervals;
      outcome.readings.insert(outcome.readings.end(), interval.readings.begin(), interval.readings.end());
      outcome.changes.insert(outcome.changes.end(), interval.changes.begin(), interval.changes.end());
      on_interval(interval);
      const double next = start + settings.interval_s;
      if (next >= settings.duration_s) break;
      probe.wait_until(next);
      start = probe.elapsed_seconds();
    }
  } catch (const Interrupted& stop) {
    // Every rank agreed on the signal inside a measurement: all of them judge what was
    // measured so far.
    outcome.complete = false;
    outcome.interrupted_by = stop.signal_number();
  }
  outcome.elapsed_seconds = probe.elapsed_seconds();
  outcome.levels = soak_levels(outcome.readings, settings.rule);
  outcome.events = find_soak_events(outcome.readings, outcome.changes, outcome.levels, settings.rule);
  return outcome;
}

int soak_exit_code(const SoakOutcome& outcome) {
  if (outcome.interrupted_by != 0) return 128 + outcome.interrupted_by;
  for (const SoakEvent& event : outcome.events)
    if (event.fails) return 1;
  return 0;
}

}  // namespace commbench
