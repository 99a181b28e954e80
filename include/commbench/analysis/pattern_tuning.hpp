// bench-patterns --tune inside the job: the trials of the search (pattern/tuning_search.hpp)
// run on the job's backend one after the other, each a short measured run of the step with
// one knob changed, under a wall-clock budget every rank agrees on; then the trial table,
// the recommendation and the files (the settings fragment, the trials as CSV and JSON).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "commbench/analysis/traced_job_step.hpp"
#include "commbench/backend/backend.hpp"
#include "commbench/runner/job_steps.hpp"
#include "commbench/pattern/pattern_config.hpp"
#include "commbench/report/reporter_set.hpp"
#include "commbench/report/run_context.hpp"

namespace commbench {

struct TuneRequest {
  double budget_seconds = 600;
  std::uint64_t steps = 3;   // timed steps per trial
  std::uint64_t warmup = 1;  // per trial
  bool prune = true;         // let a cost model fitted to the start trial skip clear losers
  std::string output_path;   // the tuned settings (ds_config fragment / keyword arguments)
  OutputRequest files;       // --csv and --json: the trials
  // --tune-against: the job's own step, which the best's saving is said against; a saving
  // under kMinimumGain of it keeps the start's settings.
  std::optional<TracedJobStep> job;
};

// Collective. Returns the exit code (0, or the Interrupted's code of a timed-out trial).
int run_pattern_tuning(JobSteps& session, Backend& backend, const PatternConfig& config, RunContext context,
                       const TuneRequest& request);

}  // namespace commbench
