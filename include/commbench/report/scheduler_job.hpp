// Which scheduler job, step and nodes a run belongs to, as Slurm told the processes.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "commbench/report/run_context.hpp"

namespace commbench {

// Looks a variable up; nullptr when unset. std::getenv in the programs, a map in tests.
using EnvironmentLookup = std::function<const char*(const char*)>;

// The Slurm job of this process as ordered (field, value) pairs: cluster, job_id, job_name,
// partition, step_id, nodelist, nodes, tasks, tasks_per_node. Empty outside a Slurm job
// (no SLURM_JOB_ID). The step's own node list and task layout win over the job's: they
// are where this step's ranks were placed. Values are kept exactly as set, never parsed,
// so garbage in a variable is reported as it was and cannot stop a run.
std::vector<std::pair<std::string, std::string>> slurm_job(const EnvironmentLookup& lookup);

// "job_id=12 step_id=0 nodelist=cb-node[1-4] ..." on one line: control characters and
// backslashes are written as \n, \t, \\ or \xNN, so a value cannot break a line-based file.
std::string scheduler_summary(const std::vector<std::pair<std::string, std::string>>& job);

// "# slurm: job_id=12 ...\n": the line the console header and every CSV file start with
// when the run was a Slurm job. Empty otherwise, so CSV files of runs outside Slurm keep
// their header on the first line.
std::string slurm_comment_line(const RunContext& context);

}  // namespace commbench
