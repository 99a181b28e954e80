// The job's own step, from its traces, for bench-patterns --tune: the tuner measures a
// modelled step, whose compute and overlap are not the job's, so what a setting saves is
// said against the step the job really took. A saving can hide no more communication than
// the job's step leaves exposed: the projection is the modelled saving, capped by that.
#pragma once

#include <optional>
#include <string>

#include "commbench/pattern/tuning_search.hpp"

namespace commbench {

struct TracedJobStep {
  std::string source;                            // the path given
  int steps = 0;                                 // profiler steps the traces hold
  double step_seconds = 0;                       // per step: the mean of the steps' longest rank's
  std::optional<double> exposed_seconds;         // per step, the ranks' mean; none when the traces do not say
  std::optional<double> communication_seconds;   // per step, the ranks' mean
};

// Reads a trace file or a folder of one job's traces (anything bench-replay reads).
// UsageError naming `flag` when it cannot, or when the traces hold no profiler step.
TracedJobStep traced_job_step(const std::string& path, const char* flag);

struct StepProjection {
  double traced_step_seconds = 0;
  double saved_seconds = 0;        // of the traced step
  double share = 0;                // saved over the traced step
  bool capped = false;             // the modelled saving exceeded what the job leaves exposed
  bool communication_bound = true; // the job's exposed communication is a tenth of its step or more
};

// What the tuner's best saves of the job's step: the modelled step's saving (start less
// best, none when slower), at most the job's exposed communication per step.
StepProjection project_onto_job(const TracedJobStep& job, const TrialMeasurement& start, const TrialMeasurement& best);

// "saves 1.2 s of the traced 5.0 s step (24 %)", or why no setting is worth changing.
std::string projection_text(const StepProjection& projection, const TracedJobStep& job, bool worth_changing);

}  // namespace commbench
