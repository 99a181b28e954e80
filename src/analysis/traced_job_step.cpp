#include "commbench/analysis/traced_job_step.hpp"

#include <algorithm>
#include <limits>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commbench/core/error.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/core/statistics.hpp"
#include "commbench/replay/trace_inputs.hpp"

namespace commbench {

namespace {

std::string ms(double seconds) { return significant_text(seconds * 1e3, 4); }

}  // namespace

TracedJobStep traced_job_step(const std::string& path, const char* flag) {
  ReadInput input;
  try {
    input = read_traces({.paths = {path}});
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{}: {}", flag, e.what()));
  }
  const TraceSummary& summary = input.summary;
  if (summary.steps.empty() || summary.ranks.empty())
    throw UsageError(fmt::format(
        "{}: {} holds no profiler step (ProfilerStep#N): the job's step is what a setting's saving is said against",
        flag, path));
  TracedJobStep job;
  job.source = path;
  job.steps = static_cast<int>(summary.steps.size());
  std::vector<double> step_times;
  for (const StepSummary& step : summary.steps) step_times.push_back(step.step_seconds);
  std::sort(step_times.begin(), step_times.end());
  for (double seconds : step_times) job.step_seconds += seconds;
  job.step_seconds /= job.steps;
  if (step_times.size() > 1)
    job.step_spread_seconds = percentile_of_sorted(step_times, 0.9) - percentile_of_sorted(step_times, 0.1);
  job.exposed_seconds = per_step_over_ranks(summary, &RankTraceSummary::exposed_seconds);
  job.communication_seconds = per_step_over_ranks(summary, &RankTraceSummary::communication_seconds);
  job.ranks_short_of_steps = ranks_short_of_steps(summary);
  job.ranks_traced = static_cast<int>(summary.ranks.size());
  job.world_size = summary.world_size;
  return job;
}

double needed_share_of(const TracedJobStep& job) {
  if (!job.step_spread_seconds || job.step_seconds <= 0) return kMinimumGain;
  return std::max(kMinimumGain, *job.step_spread_seconds / job.step_seconds);
}

StepProjection project_onto_job(const TracedJobStep& job, const TrialMeasurement& start, const TrialMeasurement& best) {
  StepProjection projection;
  projection.traced_step_seconds = job.step_seconds;
  const double modelled = std::max(0.0, start.step_seconds - best.step_seconds);
  const double exposed = job.exposed_seconds.value_or(std::numeric_limits<double>::infinity());
  projection.saved_seconds = std::min(modelled, exposed);
  projection.capped = modelled > exposed;
  projection.share = job.step_seconds > 0 ? projection.saved_seconds / job.step_seconds : 0;
  projection.communication_bound = !job.exposed_seconds || *job.exposed_seconds >= 0.1 * job.step_seconds;
  projection.needed_share = needed_share_of(job);
  projection.spread_decides = projection.needed_share > kMinimumGain;
  return projection;
}

std::string projection_text(const StepProjection& projection, const TracedJobStep& job, bool worth_changing) {
  const std::string share = significant_text(100 * projection.share, 2);
  std::string caveats =
      job.step_spread_seconds ? "" : " (one traced step: trace several for the step-to-step spread it must beat)";
  // The step is the longest of the ranks read: a slower rank not read would lengthen it.
  // A rank whose profiler stopped early: its time is per its own steps, which the reader
  // should know rests on fewer steps.
  if (job.ranks_short_of_steps.size() == 1)
    caveats += fmt::format(" (rank {}'s trace holds fewer of the {} steps: its time is taken per its own steps)",
                           job.ranks_short_of_steps.front(), job.steps);
  else if (job.ranks_short_of_steps.size() > 1)
    caveats += fmt::format(" (the traces of ranks {} hold fewer of the {} steps: their time is taken per their own steps)",
                           fmt::join(job.ranks_short_of_steps, ", "), job.steps);
  if (job.world_size > job.ranks_traced)
    caveats += fmt::format(" ({} of the job's {} ranks traced: the step is the longest of those; give every rank's trace)",
                           job.ranks_traced, job.world_size);
  if (worth_changing)
    return fmt::format("saves {} ms of the traced {} ms step ({} %){}{}", ms(projection.saved_seconds),
                       ms(projection.traced_step_seconds), share,
                       projection.capped ? ": all the communication the job's step leaves exposed" : "",
                       caveats);
  std::string why;
  if (!projection.communication_bound)
    why = fmt::format(": the step is not bound by its communication ({} ms of it exposed)", ms(*job.exposed_seconds));
  else if (projection.spread_decides && projection.saved_seconds > 0)
    why = fmt::format(", inside the {} ms its {} traced steps vary by ({} %)", ms(*job.step_spread_seconds), job.steps,
                      significant_text(100 * projection.needed_share, 2));
  return fmt::format("no setting saves more than {} % of the traced {} ms step{}; keep your settings{}", share,
                     ms(projection.traced_step_seconds), why, caveats);
}

}  // namespace commbench
