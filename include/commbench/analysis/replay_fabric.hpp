// bench-replay --fabric: each class of the job's calls held against what the fabric gave
// a bench-collectives sweep of the same operation, size and group on the same cluster
// (analysis/sweep_cost_model.hpp interpolates between the sweep's sizes).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "commbench/pattern/communication_cost.hpp"
#include "commbench/replay/trace_summary.hpp"

namespace commbench {

struct FabricFigure {
  std::optional<double> seconds;     // one call at the fabric's speed
  std::optional<double> busbw_gbps;  // the fabric's busbw at that size and group
  std::optional<double> ratio;       // the job's busbw over the fabric's
};

struct FabricComparison {
  std::vector<FabricFigure> classes;  // one per TraceSummary::classes
  double job_seconds = 0;             // the compared classes' calls, as the job took them
  double fabric_seconds = 0;          // the same calls at the fabric's speed
  std::vector<std::string> notes;     // classes without a figure, and why
  std::string verdict;
  std::string cause;  // the top cause of the job's communication time (judge_against_fabric)
  std::string basis;  // where the figures came from: "--fabric FILE", "--measure-fabric: ..."
};

// The collective a traced class's operation names, when a fabric has a figure for it (not
// a barrier, a point-to-point call or alltoallv).
std::optional<Collective> collective_named(const std::string& op);

// `nodes`: the nodes the job's ranks were on (its traces' hosts).
FabricComparison compare_with_fabric(const TraceSummary& summary, const CommunicationCostModel& fabric, int nodes);

}  // namespace commbench
