#include "replay_run.hpp"

#include <fmt/format.h>

#include "commbench/core/error.hpp"
#include "commbench/pattern/schedule_file.hpp"
#include "commbench/pattern/schedule_json.hpp"

namespace commbench {

PatternConfig lay_out_traced_step(const std::vector<RankSchedule>& schedules, JobSession& session) {
  Bootstrap& world = session.world();
  PatternConfig config;
  session.step("laying the traced step out on the job's ranks", [&] {
    const int traced = static_cast<int>(schedules.size());
    if (traced != world.size())
      throw UsageError(
          fmt::format("--replay: the traces are of a job of {} ranks and this job has {}; run it on {} "
                      "ranks",
                      traced, world.size(), traced));
    std::string lines;
    for (const RankSchedule& schedule : schedules) lines += schedule_json_lines(schedule, true);
    config.schedule_file = parse_schedule_lines(lines, "(the traced step)");
    config.model.name = "traced step";
    // Every traced call runs on the whole job: the extraction refuses calls on subgroups.
    config.layout.ranks_per_node = world.local_size();
    config.layout.data = world.size();
    config.layout.validate(world.size());
    check_groups_line_up(*config.schedule_file, config.layout);
  });
  return config;
}

}  // namespace commbench
