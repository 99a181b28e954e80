#include <gtest/gtest.h>

#include <map>
#include <string>

#include "commbench/report/scheduler_job.hpp"

namespace commbench {
namespace {

using Variables = std::map<std::string, std::string>;
using Fields = std::vector<std::pair<std::string, std::string>>;

Fields job_of(const Variables& variables) {
  return slurm_job([&](const char* name) -> const char* {
    const auto found = variables.find(name);
    return found == variables.end() ? nullptr : found->second.c_str();
  });
}

TEST(SlurmJob, OutsideSlurmThereIsNoJob) {
  EXPECT_TRUE(job_of({}).empty());
  // A stray SLURM_ variable without a job id (a login shell's SLURM_CONF) is no job.
  EXPECT_TRUE(job_of({{"SLURM_CONF", "/etc/slurm/slurm.conf"}, {"SLURM_NNODES", "4"}}).empty());
}

TEST(SlurmJob, AStepReportsItsOwnNodesAndLayoutBeforeTheJobs) {
  const Fields job = job_of({{"SLURM_CLUSTER_NAME", "commbench"},
                             {"SLURM_JOB_ID", "41"},
                             {"SLURM_JOB_NAME", "validate"},
                             {"SLURM_JOB_PARTITION", "debug"},
                             {"SLURM_STEP_ID", "2"},
                             {"SLURM_JOB_NODELIST", "cb-node[1-4]"},
                             {"SLURM_STEP_NODELIST", "cb-node[1-2]"},
                             {"SLURM_JOB_NUM_NODES", "4"},
                             {"SLURM_STEP_NUM_NODES", "2"},
                             {"SLURM_NTASKS", "8"},
                             {"SLURM_STEP_NUM_TASKS", "4"},
                             {"SLURM_TASKS_PER_NODE", "2(x4)"},
                             {"SLURM_STEP_TASKS_PER_NODE", "2(x2)"}});
  const Fields expected{{"cluster", "commbench"}, {"job_id", "41"},        {"job_name", "validate"},
                        {"partition", "debug"},   {"step_id", "2"},        {"nodelist", "cb-node[1-2]"},
                        {"nodes", "2"},           {"tasks", "4"},          {"tasks_per_node", "2(x2)"}};
  EXPECT_EQ(job, expected);
  EXPECT_EQ(scheduler_summary(job),
            "cluster=commbench job_id=41 job_name=validate partition=debug step_id=2 nodelist=cb-node[1-2] nodes=2 "
            "tasks=4 tasks_per_node=2(x2)");
}

TEST(SlurmJob, ABatchScriptWithoutAStepReportsTheJobAndTheOldSpellings) {
  const Fields job =
      job_of({{"SLURM_JOBID", "7"}, {"SLURM_NODELIST", "n[01-16]"}, {"SLURM_NNODES", "16"}, {"SLURM_NPROCS", "128"}});
  const Fields expected{{"job_id", "7"}, {"nodelist", "n[01-16]"}, {"nodes", "16"}, {"tasks", "128"}};
  EXPECT_EQ(job, expected);
}

TEST(SlurmJob, GarbageIsRecordedAsItWasAndCannotBreakALine) {
  const Fields job = job_of({{"SLURM_JOB_ID", "12\nrank,0"}, {"SLURM_STEP_ID", "x\\y\t\x01"}, {"SLURM_NNODES", ""}});
  EXPECT_EQ(job[0].second, "12\nrank,0");  // kept exactly in the record (JSON escapes it)
  const std::string summary = scheduler_summary(job);
  EXPECT_EQ(summary, "job_id=12\\nrank,0 step_id=x\\\\y\\t\\x01 nodes=");
  EXPECT_EQ(summary.find('\n'), std::string::npos);
}

TEST(SlurmJob, TheCommentLineIsThereOnlyForASlurmJob) {
  RunContext context;
  EXPECT_EQ(slurm_comment_line(context), "");
  context.slurm = {{"job_id", "41"}, {"step_id", "0"}};
  EXPECT_EQ(slurm_comment_line(context), "# slurm: job_id=41 step_id=0\n");
}

}  // namespace
}  // namespace commbench
