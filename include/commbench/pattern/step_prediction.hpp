// A training step's timeline computed without running it: every rank's schedule replayed
// as a discrete-event simulation, with each collective's duration from a cost model.
//
// An item becomes ready when its stream predecessor and the steps it waits for have
// ended (0, the step's start, when there are none). Compute ends compute_seconds after
// it is ready. A collective over a group starts when every member of the group is ready
// for it — the k-th collective a rank lists on a group matches the k-th every other
// member lists there, as schedules guarantee — and all members end it together, the
// model's duration later. A peer round ends for a rank when it and the stages it sends
// to or receives from are ready, plus one message's duration. The timings come out in
// the executor's form (ItemTiming), so account_step, the report and the trace work on a
// predicted step unchanged.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <vector>

#include "commbench/pattern/communication_cost.hpp"
#include "commbench/pattern/parallel_layout.hpp"
#include "commbench/pattern/pattern_config.hpp"
#include "commbench/pattern/schedule.hpp"
#include "commbench/pattern/step_accounting.hpp"

namespace commbench {

// Maps any world rank of the layout to the world rank of the simulated schedule that
// stands in for it (itself when every rank is simulated).
using StandInOf = std::function<int(int world_rank)>;

// Timings of each of `schedules` (one entry per step, in schedule order). Every group
// member of a simulated rank must have a stand-in among `schedules`. Throws UsageError
// ("pattern schedule: ...", as the executor does) when the schedules cannot all complete:
// a collective some member never reaches.
std::vector<std::vector<ItemTiming>> simulate_step(const ParallelLayout& layout,
                                                   std::span<const RankSchedule> schedules,
                                                   const StandInOf& stand_in_of, const CommunicationCostModel& costs);

// Up to this many ranks every rank's schedule is simulated; above it, one rank per
// pipeline stage stands in for its stage (the shortcut, docs/patterns.md).
inline constexpr int kExactPredictionRanks = 64;

struct PredictedRank {
  RankSchedule schedule;
  std::vector<ItemTiming> timings;
};

struct StepPrediction {
  std::vector<PredictedRank> ranks;  // in world-rank order: every rank, or the stand-ins
  bool every_rank = true;            // false: one stand-in per pipeline stage
};

// The simulated rank whose step is the longest, and that step's breakdown: what a
// prediction reports, as a measured run reports its slowest rank.
struct SlowestPredictedRank {
  std::size_t index = 0;  // into StepPrediction::ranks
  StepBreakdown step;
};
SlowestPredictedRank slowest_predicted_rank(const StepPrediction& prediction);

// The step `config` describes, on its layout (config.layout.ranks() ranks, however many
// this process has), costed by `costs`.
StepPrediction predict_step(const PatternConfig& config, const CommunicationCostModel& costs,
                            int exact_ranks = kExactPredictionRanks);

}  // namespace commbench
