// bench-validate --soak: the pair rounds repeated for a length of time, one round per
// interval, without re-starting the job. The rounds cycle through the all-pairs schedule
// over the seeded shuffle of the nodes, so every node is measured in every interval (one
// idles per round for an odd count) and meets each partner in turn: a node that turns
// slow is slow with every partner it meets, a link that turns slow only when its two ends
// meet (soak_events.hpp). Each interval is handed to the caller as soon as it ends, so
// a soak stopped early has streamed everything it measured.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "commbench/validate/soak_events.hpp"
#include "commbench/validate/validation_plan.hpp"

namespace commbench {

struct SoakSettings {
  double duration_s = 60;
  double interval_s = 1;  // from one interval's start to the next, at least
  std::uint64_t seed = 1;
  SoakRule rule;
};

// What one interval measured.
struct SoakInterval {
  int index = 0;
  double start_s = 0, end_s = 0;
  std::vector<SoakReading> readings;  // one per pair of its round
  std::vector<SoakChange> changes;
  std::vector<NicReading> nics;  // what each node's rails carried in its round
};

struct SoakOutcome {
  std::vector<std::string> node_names;
  std::vector<SoakReading> readings;
  std::vector<SoakChange> changes;
  SoakLevels levels;
  std::vector<SoakEvent> events;
  int intervals = 0;
  int schedule_rounds = 0;  // rounds in one cycle of the schedule
  double elapsed_seconds = 0;
  bool complete = true;    // false when a signal stopped it before its duration
  int interrupted_by = 0;  // the signal (exit 128 + it); 0 when none

  // The nodes to leave out: every failing node event's node, and one end of each failing
  // link event that no such node already removes (as bench-validate's plan decides).
  std::vector<int> excluded_nodes() const;
  // "--exclude=node[1-2]", or empty when nothing fails.
  std::string exclude_line() const;
};

using SoakIntervalSink = std::function<void(const SoakInterval&)>;

SoakOutcome run_soak(ClusterProbe& probe, const SoakSettings& settings, const SoakIntervalSink& on_interval);

// 0 no failing event; 1 one failed; 128 + signal when a signal stopped it.
int soak_exit_code(const SoakOutcome& outcome);

}  // namespace commbench
