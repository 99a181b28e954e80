// bench-replay --replay: the job's traced step, every rank's calls in their order with the
// recorded gaps as stand-in compute, run on this job's ranks as bench-patterns runs a step
// (pattern_run.hpp). The step is the one --dump-schedule writes, read back through the
// same reader as bench-patterns --schedule, so the two cannot drift apart.
#pragma once

#include <vector>

#include "commbench/cli/job_session.hpp"
#include "commbench/pattern/pattern_config.hpp"
#include "commbench/pattern/schedule.hpp"

namespace commbench {

// The traced step (every rank's schedule, as extract_schedules gives them) as the pattern
// run_resolved_pattern() runs on this job's ranks. UsageError (exit 2) when this job has
// another number of ranks than the traced one.
PatternConfig lay_out_traced_step(const std::vector<RankSchedule>& schedules, JobSession& session);

}  // namespace commbench
