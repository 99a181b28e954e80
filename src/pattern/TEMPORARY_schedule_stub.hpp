// TEMPORARY — delete at the merge of branch i15-sched, together with
// TEMPORARY_schedule_stub.cpp. It declares what that branch provides for real
// (src/cli/pattern_flags.hpp: PatternFlags, add_pattern_flags, resolve_pattern_config; and
// schedule_json_lines), so bench-patterns compiles meanwhile. bench_patterns_app.cpp
// includes it in one marked line, to be replaced by the real headers.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "commbench/pattern/pattern_config.hpp"
#include "commbench/pattern/schedule.hpp"

namespace commbench {

struct PatternFlags {
  std::string pattern = "ddp";
};

void add_pattern_flags(CLI::App& app, PatternFlags& flags);
PatternConfig resolve_pattern_config(const PatternFlags& flags, int world_ranks, int ranks_per_node,
                                     std::vector<std::string>& warnings);
// One JSON object a line per step of `schedule`.
std::string schedule_json_lines(const RankSchedule& schedule);

}  // namespace commbench
