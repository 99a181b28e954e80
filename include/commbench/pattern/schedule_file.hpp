// A step given as a file instead of a modelled pattern (bench-patterns --schedule): the
// JSON lines of --dump-schedule (schedule_json.hpp), as bench-patterns writes them for its
// own patterns and bench-replay writes them for a job it read. Every rank's lines, or one
// rank's, which then stands for every rank (a data-parallel step is the same on each).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "commbench/pattern/parallel_layout.hpp"
#include "commbench/pattern/schedule.hpp"

namespace commbench {

struct ScheduleFile {
  std::string path;
  std::vector<RankSchedule> ranks;  // by world rank; one entry when it stands for every rank
  // Waits on steps the file does not list (a dump without compute lines), left out.
  std::size_t dropped_waits = 0;

  bool one_for_all() const { return ranks.size() == 1; }
  // The schedule of `world_rank` in a job of `world_ranks`; UsageError naming the file
  // when it holds another number of ranks.
  RankSchedule for_rank(int world_rank, int world_ranks) const;
};

// UsageError when the members of a group of `layout` do not list the same collectives
// (operation, type, size) in the same order on it: run, they would wait for each other
// forever. Peer rounds are not compared.
void check_groups_line_up(const ScheduleFile& file, const ParallelLayout& layout);

// UsageError "--schedule FILE: line N: ..." for a line that is no JSON object of the
// format, an unknown kind, operation, type, group or phase, a step listed twice or out
// of order, a wait on a later step, ranks that are not 0..N-1, or a file without a step.
std::shared_ptr<const ScheduleFile> read_schedule_file(const std::string& path);
// The same for lines already in memory; `path` names them in the errors.
std::shared_ptr<const ScheduleFile> parse_schedule_lines(const std::string& text, const std::string& path);

}  // namespace commbench
