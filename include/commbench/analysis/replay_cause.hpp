// bench-replay's verdict against a fabric: of what slowed the job's communication, the
// cause that cost it the most time per rank, with the figures that name it.
#pragma once

#include <string>

#include "commbench/pattern/communication_cost.hpp"
#include "commbench/replay/trace_summary.hpp"
#include "commbench/analysis/replay_fabric.hpp"

namespace commbench {

struct CommunicationCause {
  std::string name;    // "fabric shortfall", "small collectives", "straggler", "" when none stands out
  double seconds = 0;  // per rank: the time it cost
  std::string text;    // the verdict line
};

// The candidates, each as time per rank:
// - shortfall: the compared calls as the job took them, less the same calls at the
//   fabric's speed;
// - small collectives: the calls the fabric itself runs in under twice its latency floor
//   for their operation and group, at that floor each (what fusing them would save);
// - a straggler: the time the others waited for the rank that arrived last most often.
// The largest is named when it is at least a tenth of the ranks' mean communication time.
CommunicationCause top_cause(const TraceSummary& summary, const FabricComparison& comparison,
                             const CommunicationCostModel& fabric, int nodes);

// compare_with_fabric, with the top cause's verdict line in `cause` when any call was
// held against the fabric.
FabricComparison judge_against_fabric(const TraceSummary& summary, const CommunicationCostModel& fabric, int nodes);

}  // namespace commbench
