// The bandwidth model for a bench-patterns run: for each group a schedule uses, what each
// collective over it should reach (theoretical_busbw with that group's layout: its nodes,
// its ranks per node and their GPUs), and the NICs between nodes. Rank 0 probes its node
// once; other nodes are assumed alike (bench-topology checks that).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "commbench/pattern/pattern_groups.hpp"
#include "commbench/pattern/pattern_report.hpp"

namespace commbench {

struct PatternBandwidthModel {
  std::map<CommunicationType, GroupBandwidth> bandwidths;  // every collective over every group split
  NicModel nic;
  std::string probe_failure;  // why the figures are unknown, or empty
};

// Collective over the world and then over each group in GroupRole order. A probe failure
// only leaves the figures unknown; it never fails the run.
PatternBandwidthModel model_pattern_bandwidth(PatternGroups& groups);

}  // namespace commbench
