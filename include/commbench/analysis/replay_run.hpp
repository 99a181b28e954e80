// bench-replay --replay: the job's traced step, every rank's calls in their order with the
// recorded gaps as stand-in compute, run on this job's ranks as bench-patterns runs a step
// (pattern_run.hpp). The step is the one --dump-schedule writes, read back through the
// same reader as bench-patterns --schedule, so the two cannot drift apart.
#pragma once

#include <string>
#include <vector>

#include "commbench/runner/job_steps.hpp"
#include "commbench/pattern/pattern_config.hpp"
#include "commbench/pattern/pattern_report.hpp"
#include "commbench/pattern/schedule.hpp"
#include "commbench/replay/trace_summary.hpp"

namespace commbench {

// The traced step (every rank's schedule, as extract_schedules gives them) as the pattern
// run_resolved_pattern() runs on this job's ranks. UsageError (exit 2) when this job has
// another number of ranks than the traced one.
PatternConfig lay_out_traced_step(const std::vector<RankSchedule>& schedules, JobSteps& session);

// The console table of each operation's calls and busbw in the job beside the replay's:
// the job's busbw over its calls' time from the last arrival to the end (as its own table
// gives it), the replay's as bench-patterns measures a type. A barrier is replayed as an
// allreduce of one float and counted there.
std::string replayed_beside_job(const TraceSummary& job, const PatternReport& replayed);

}  // namespace commbench
