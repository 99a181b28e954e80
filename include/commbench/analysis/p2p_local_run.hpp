// bench-p2p --local: the first rank of every node measures the GPUs it sees (GPU to GPU by
// each method, host to GPU and back, load latency, peer access), every cell read against
// its link's spec from that node's own topology; rank 0 gathers the nodes' cells.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "commbench/runner/job_steps.hpp"
#include "commbench/p2p/local_link_plan.hpp"
#include "commbench/p2p/pair_matrix.hpp"

namespace commbench {

struct LocalRunSettings {
  LocalPlanRequest plan;
  CopyRequest copy;                     // bytes, warm-up, iterations, check (both_ways per test)
  std::uint64_t latency_loads = 0;      // dependent loads per latency figure; 0: no latency
};

// One measured node as the report shows it.
struct LocalNodeResult {
  LocalNode node;
  std::vector<std::string> notes;  // what was not measured, and why
  PeerAccessCodes peer_access;     // [source][destination]
};

struct LocalRunResult {
  std::vector<LocalNodeResult> nodes;  // on rank 0: every node, in rank order of its first rank
  std::vector<PairCell> cells;         // on rank 0: every node's cells
  std::uint64_t wrong_bytes = 0;       // summed over every node
};

// Collective: every rank takes the same steps under the watchdog (the nodes' plans differ
// in length; the others wait in step with the longest), one per measurement. `opened` runs
// once every node's GPUs are open, before the first measurement: the result files are
// begun there, so that a node without GPUs leaves none behind.
LocalRunResult run_local_links(JobSteps& session, const LocalRunSettings& settings,
                               const std::function<void()>& opened);

}  // namespace commbench
