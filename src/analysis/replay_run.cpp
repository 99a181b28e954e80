#include "commbench/analysis/replay_run.hpp"

#include <map>
#include <optional>

#include <fmt/format.h>

#include "commbench/core/error.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/pattern/schedule_file.hpp"
#include "commbench/pattern/schedule_json.hpp"

namespace commbench {

PatternConfig lay_out_traced_step(const std::vector<RankSchedule>& schedules, JobSteps& session) {
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

namespace {

struct OperationRow {
  std::uint64_t job_calls = 0;
  double job_weighted = 0;  // busbw x seconds over the calls with a busbw
  double job_seconds = 0;
  std::uint64_t replayed_calls = 0;
  std::optional<double> replayed_busbw;

  std::optional<double> job_busbw() const {
    return job_seconds > 0 ? std::optional<double>(job_weighted / job_seconds) : std::nullopt;
  }
};

std::string figure_text(const std::optional<double>& gbps) { return gbps ? significant_text(*gbps, 4) : "-"; }

}  // namespace

std::string replayed_beside_job(const TraceSummary& job, const PatternReport& replayed) {
  std::map<std::string, OperationRow> rows;
  for (const TracedClass& traced : job.classes) {
    OperationRow& row = rows[traced.op == "barrier" ? std::string("allreduce") : traced.op];
    row.job_calls += traced.calls;
    if (!traced.busbw_gbps || !traced.seconds || *traced.seconds <= 0) continue;
    const double seconds = *traced.seconds * static_cast<double>(traced.calls);
    row.job_weighted += *traced.busbw_gbps * seconds;
    row.job_seconds += seconds;
  }
  for (const CommunicationTypeReport& type : replayed.types) {
    if (type.totals.type.kind != StepKind::collective) continue;
    OperationRow& row = rows[std::string(name_of(type.totals.type.op))];
    row.replayed_calls += type.totals.count;
    if (type.totals.seconds > 0) row.replayed_busbw = type.busbw_gbps;
  }
  std::string text = "# each operation in the job and replayed here (busbw GB/s)\n";
  text += fmt::format("  {:<14} {:>10} {:>11} {:>15} {:>16} {:>13}\n", "op", "job calls", "job busbw", "replayed calls",
                      "replayed busbw", "replayed/job");
  for (const auto& [op, row] : rows) {
    const std::optional<double> job_busbw = row.job_busbw();
    const std::string ratio = job_busbw && *job_busbw > 0 && row.replayed_busbw
                                  ? significant_text(*row.replayed_busbw / *job_busbw, 3)
                                  : std::string("-");
    text += fmt::format("  {:<14} {:>10} {:>11} {:>15} {:>16} {:>13}\n", op, row.job_calls, figure_text(job_busbw),
                        row.replayed_calls, figure_text(row.replayed_busbw), ratio);
  }
  return text;
}

}  // namespace commbench
