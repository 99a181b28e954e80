// The job's own step, from its traces, for bench-patterns --tune: the tuner measures a
// modelled step, whose compute and overlap are not the job's, so what a setting saves is
// said against the step the job really took. A saving can hide no more communication than
// the job's step leaves exposed: the projection is the modelled saving, capped by that. A
// saving the job's own steps vary by more than cannot be seen in the job: it must exceed
// their spread too, not only a fixed share.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "commbench/pattern/tuning_search.hpp"

namespace commbench {

struct TracedJobStep {
  std::string source;                            // the path given
  int steps = 0;                                 // profiler steps the traces hold
  double step_seconds = 0;                       // per step: the mean of the steps' longest rank's
  std::optional<double> exposed_seconds;         // per step, the ranks' mean; none when the traces do not say
  std::optional<double> communication_seconds;   // per step, the ranks' mean
  // How much the steps vary: the middle 80 % of their times (90th less 10th percentile).
  // None for a single traced step.
  std::optional<double> step_spread_seconds;
  int ranks_traced = 0;  // the ranks whose traces were read
  int world_size = 0;    // the job's ranks, as its traces say (0 when they do not)
  // Ranks whose traces hold fewer of the steps: their figures are per their own steps.
  std::vector<int> ranks_short_of_steps;
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
  // The share a saving must reach to be worth a change: kMinimumGain, or the job's
  // step-to-step spread over its step when that is larger.
  double needed_share = kMinimumGain;
  bool spread_decides = false;     // the spread, not kMinimumGain, set `needed_share`
  bool worth_changing() const { return share >= needed_share; }
};

// The share of the job's step a saving must reach to be worth a change: kMinimumGain, or
// the steps' spread over the step when that is larger.
double needed_share_of(const TracedJobStep& job);

// What the tuner's best saves of the job's step: the modelled step's saving (start less
// best, none when slower), at most the job's exposed communication per step, and the share
// it must reach to be worth a change.
StepProjection project_onto_job(const TracedJobStep& job, const TrialMeasurement& start, const TrialMeasurement& best);

// "saves 1.2 s of the traced 5.0 s step (24 %)", or why no setting is worth changing; said
// for a single traced step, that its spread is unknown.
std::string projection_text(const StepProjection& projection, const TracedJobStep& job, bool worth_changing);

}  // namespace commbench
