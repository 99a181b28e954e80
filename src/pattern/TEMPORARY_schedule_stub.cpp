// TEMPORARY — delete at the merge of branch i15-sched (see TEMPORARY_schedule_stub.hpp).
// No real logic: just enough for bench-patterns to link; build_schedule refuses to run.
#include "TEMPORARY_schedule_stub.hpp"

#include "commbench/core/error.hpp"

namespace commbench {

std::string_view name_of(PatternKind) { return "ddp"; }

void add_pattern_flags(CLI::App& app, PatternFlags& flags) {
  app.add_option("--pattern", flags.pattern, "TEMPORARY stub: the schedules are not merged yet");
}

PatternConfig resolve_pattern_config(const PatternFlags&, int world_ranks, int ranks_per_node,
                                     std::vector<std::string>&) {
  PatternConfig config;
  config.layout.data = world_ranks;
  config.layout.ranks_per_node = ranks_per_node;
  return config;
}

RankSchedule build_schedule(const PatternConfig&, int) {
  throw UsageError("--pattern: the schedules are not merged yet (TEMPORARY stub)");
}

std::string schedule_json_lines(const RankSchedule&) { return ""; }

}  // namespace commbench
