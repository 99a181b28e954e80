#include "commbench/report/scheduler_job.hpp"

#include <array>
#include <string_view>

#include <fmt/format.h>

namespace commbench {
namespace {

struct SlurmField {
  const char* field;
  // Variables that may carry it, the most specific first: a step's own, then the job's,
  // then the older spellings some Slurm versions still set.
  std::array<const char*, 3> variables;
};

constexpr std::array<SlurmField, 9> kSlurmFields{{
    {"cluster", {"SLURM_CLUSTER_NAME", nullptr, nullptr}},
    {"job_id", {"SLURM_JOB_ID", "SLURM_JOBID", nullptr}},
    {"job_name", {"SLURM_JOB_NAME", nullptr, nullptr}},
    {"partition", {"SLURM_JOB_PARTITION", nullptr, nullptr}},
    {"step_id", {"SLURM_STEP_ID", "SLURM_STEPID", nullptr}},
    {"nodelist", {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST"}},
    {"nodes", {"SLURM_STEP_NUM_NODES", "SLURM_JOB_NUM_NODES", "SLURM_NNODES"}},
    {"tasks", {"SLURM_STEP_NUM_TASKS", "SLURM_NTASKS", "SLURM_NPROCS"}},
    {"tasks_per_node", {"SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE", nullptr}},
}};

std::string escaped(std::string_view value) {
  std::string text;
  for (const char c : value) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\\')
      text += "\\\\";
    else if (c == '\n')
      text += "\\n";
    else if (c == '\t')
      text += "\\t";
    else if (byte < 0x20 || byte == 0x7f)
      text += fmt::format("\\x{:02x}", byte);
    else
      text += c;
  }
  return text;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> slurm_job(const EnvironmentLookup& lookup) {
  std::vector<std::pair<std::string, std::string>> job;
  if (lookup("SLURM_JOB_ID") == nullptr && lookup("SLURM_JOBID") == nullptr) return job;
  for (const SlurmField& field : kSlurmFields) {
    for (const char* variable : field.variables) {
      if (variable == nullptr) break;
      if (const char* value = lookup(variable)) {
        job.emplace_back(field.field, value);
        break;
      }
    }
  }
  return job;
}

std::string scheduler_summary(const std::vector<std::pair<std::string, std::string>>& job) {
  std::string line;
  for (const auto& [field, value] : job) {
    if (!line.empty()) line += ' ';
    line += field;
    line += '=';
    line += escaped(value);
  }
  return line;
}

std::string slurm_comment_line(const RunContext& context) {
  if (context.slurm.empty()) return {};
  return fmt::format("# slurm: {}\n", scheduler_summary(context.slurm));
}

}  // namespace commbench
