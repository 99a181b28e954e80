// bench-validate --soak, in a job and simulated: the soak run (validate/soak_run.hpp) with
// its records streamed through the job's reporters as each interval ends, a progress line
// a minute on the console, and the summary, events and exclude list at the end.
#pragma once

#include <string>

#include "commbench/cli/job_session.hpp"
#include "commbench/report/reporter_set.hpp"
#include "commbench/report/run_context.hpp"
#include "commbench/validate/soak_run.hpp"
#include "commbench/validate/validation_plan.hpp"

namespace commbench {

// Collective: every rank runs the soak; the reporting rank prints and writes.
int run_soak_in_job(JobSession& session, ClusterProbe& probe, RunContext context, const SoakSettings& settings);

// A simulated soak (one process): prints its summary and returns the exit code; the
// files, when asked for, are written through the reporters a soak in a job writes with.
int run_simulated_soak(ClusterProbe& cluster, const SoakSettings& settings, const std::string& header,
                       RunContext context, const OutputRequest& files);

}  // namespace commbench
