#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "commbench/backend/local_bootstrap.hpp"
#include "commbench/backend/typed_exchange.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/host_memory.hpp"
#include "commbench/core/launcher_env.hpp"
#include "commbench/report/provenance.hpp"

namespace commbench {
namespace {

EnvironmentLookup fake(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(LauncherRank, FromOpenMpiPmixOrSlurm) {
  EXPECT_EQ(launcher_rank(fake({})), std::nullopt);
  EXPECT_EQ(launcher_rank(fake({{"OMPI_COMM_WORLD_RANK", "3"}})), 3);
  EXPECT_EQ(launcher_rank(fake({{"SLURM_PROCID", "12"}})), 12);
  EXPECT_EQ(launcher_rank(fake({{"PMIX_RANK", "0"}, {"SLURM_PROCID", "5"}})), 0);
  // Garbage is ignored, not trusted.
  EXPECT_EQ(launcher_rank(fake({{"OMPI_COMM_WORLD_RANK", "x1"}, {"SLURM_PROCID", "2"}})), 2);
  EXPECT_EQ(parse_non_negative_int("-1"), std::nullopt);
  EXPECT_EQ(parse_non_negative_int("7abc"), std::nullopt);
  EXPECT_EQ(parse_non_negative_int("99999999999"), std::nullopt);
  EXPECT_EQ(parse_non_negative_int("42"), 42);
}

TEST(LauncherSize, FromOpenMpiPmiOrASlurmStepNotABatchScript) {
  EXPECT_EQ(launcher_size(fake({})), std::nullopt);
  EXPECT_EQ(launcher_size(fake({{"OMPI_COMM_WORLD_SIZE", "4"}})), 4);
  EXPECT_EQ(launcher_size(fake({{"PMI_SIZE", "2"}})), 2);
  EXPECT_EQ(launcher_size(fake({{"SLURM_STEP_NUM_TASKS", "32"}, {"SLURM_PROCID", "5"}})), 32);
  // What sbatch's script sees: a rank and the allocation's tasks, but no step.
  EXPECT_EQ(launcher_size(fake({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}})), std::nullopt);
}

TEST(HostMemory, ReadsMemAvailable) {
  const std::string path = std::filesystem::temp_directory_path() / ("meminfo-" + std::to_string(::getpid()));
  std::ofstream(path) << "MemTotal:       24000000 kB\nMemFree:  100 kB\nMemAvailable:   2048 kB\n";
  EXPECT_EQ(available_host_memory(path), 2048u * 1024u);
  std::ofstream(path) << "MemTotal: 1 kB\n";
  EXPECT_EQ(available_host_memory(path), std::nullopt);
  std::filesystem::remove(path);
  EXPECT_EQ(available_host_memory(path), std::nullopt);
  EXPECT_TRUE(available_host_memory().has_value());  // the real /proc/meminfo
}

TEST(HostMemory, RequireHostMemoryNamesTheFlagWhatIsAskedAndWhatIsAvailable) {
  const std::string path = std::filesystem::temp_directory_path() / ("meminfo-req-" + std::to_string(::getpid()));
  std::ofstream(path) << "MemAvailable:   1048576 kB\n";  // 1 GiB
  EXPECT_NO_THROW(require_host_memory(std::uint64_t{1} << 30, "-b/--bytes: a host buffer", path));
  try {
    require_host_memory((std::uint64_t{1} << 30) + 1, "-b/--bytes: a host buffer", path);
    ADD_FAILURE() << "a buffer one byte over MemAvailable was accepted";
  } catch (const UsageError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("-b/--bytes: a host buffer of ", 0), 0u) << message;
    EXPECT_NE(message.find("does not fit in the 1GiB of host memory available"), std::string::npos) << message;
  }
  std::filesystem::remove(path);
  // Unreadable: nothing to check against, so nothing is refused.
  EXPECT_NO_THROW(require_host_memory(~std::uint64_t{0}, "-b/--bytes: a host buffer", path));
}

TEST(Provenance, CommandLineQuotingAndRelevantVariables) {
  const char* argv[] = {"bench-collectives", "-b", "8", "--csv", "my results.csv", "it's"};
  EXPECT_EQ(quoted_command_line(6, argv), "bench-collectives -b 8 --csv 'my results.csv' 'it'\\''s'");
  EXPECT_TRUE(is_relevant_variable("NCCL_IB_HCA"));
  EXPECT_TRUE(is_relevant_variable("SLURM_JOB_ID"));
  EXPECT_TRUE(is_relevant_variable("OMPI_MCA_btl"));
  EXPECT_TRUE(is_relevant_variable("UCX_TLS"));
  EXPECT_FALSE(is_relevant_variable("HOME"));
  EXPECT_FALSE(is_relevant_variable("NCCLX"));
  EXPECT_FALSE(is_relevant_variable("PMIX_SERVER_URI2"));
  EXPECT_FALSE(is_relevant_variable("OMPI_MCA_orte_precondition_transports"));
  EXPECT_FALSE(is_relevant_variable("NCCL_SECRET_KEY"));
  ::setenv("NCCL_ALGO", "Ring", 1);
  bool found = false;
  for (const auto& [name, value] : relevant_environment()) found = found || (name == "NCCL_ALGO" && value == "Ring");
  EXPECT_TRUE(found);
  EXPECT_EQ(utc_timestamp().size(), 20u);
}

TEST(LocalBootstrap, OneRankWhoseAgreementsAreTheIdentity) {
  LocalBootstrap alone;
  EXPECT_EQ(alone.size(), 1);
  EXPECT_EQ(alone.rank(), 0);
  ASSERT_EQ(alone.hostnames().size(), 1u);
  EXPECT_FALSE(alone.hostname().empty());
  EXPECT_TRUE(alone.any(true));
  EXPECT_EQ(alone.bitwise_or(6), 6);
  EXPECT_EQ(alone.first_rank_where(true), 0);
  EXPECT_EQ(alone.first_rank_where(false), -1);
  EXPECT_DOUBLE_EQ(alone.max_with_rank(2.5).value, 2.5);
  EXPECT_EQ(all_gather_as(alone, std::string("x")), std::vector<std::string>{"x"});
  EXPECT_EQ(alone.split(3, 0)->size(), 1);
}

}  // namespace
}  // namespace commbench
