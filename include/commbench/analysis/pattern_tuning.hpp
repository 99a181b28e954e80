// bench-patterns --tune inside the job: the trials of the search (pattern/tuning_search.hpp)
// run on the job's backend one after the other, each a short measured run of the step with
// one knob changed, under a wall-clock budget every rank agrees on; then the trial table,
// the recommendation and the settings fragment; the trials go to the shell's CSV and JSON.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "commbench/analysis/traced_job_step.hpp"
#include "commbench/backend/backend.hpp"
#include "commbench/runner/job_steps.hpp"
#include "commbench/pattern/pattern_config.hpp"
#include "commbench/core/record.hpp"
#include "commbench/report/reporter_set.hpp"
#include "commbench/report/run_context.hpp"

namespace commbench {

struct TuneRequest {
  double budget_seconds = 600;
  std::uint64_t steps = 3;   // timed steps per trial
  std::uint64_t warmup = 1;  // per trial
  bool prune = true;         // let a cost model fitted to the start trial skip clear losers
  std::string output_path;   // the tuned settings (ds_config fragment / keyword arguments)
  // --memory-limit: candidates whose ranks need more (pattern/rank_memory.hpp) are not run.
  std::optional<std::uint64_t> memory_limit_bytes;
  OutputRequest files;       // --csv and --json: the trials
  // --tune-against: the job's own step, which the best's saving is said against; a saving
  // under kMinimumGain of it, or inside its steps' spread, keeps the start's settings.
  std::optional<TracedJobStep> job;
};

// The trials' files (--csv, --json), which the command shell owns: each trial goes to them
// as the search decides it, so a stop in a later trial keeps it; the document's own
// sections (what was searched, the recommendation) come once the search has ended.
struct TuningFiles {
  std::function<void(const Record& trial)> add_trial;
  std::function<void(const RunSummary& summary)> finish;
};

// The run's context as the trials' files describe it: their schema and record kind, the
// pattern's parameters leading each CSV line and every knob's value ending it.
RunContext tuning_files_context(RunContext context, const PatternConfig& config);

// Collective. Returns the exit code (0); a signal ends the search with Interrupted.
int run_pattern_tuning(JobSteps& session, Backend& backend, const PatternConfig& config, RunContext context,
                       const TuneRequest& request, const TuningFiles& files);

}  // namespace commbench
