#include "commbench/core/launcher_env.hpp"

#include <cerrno>
#include <climits>
#include <cstdlib>

namespace commbench {

std::optional<int> parse_non_negative_int(const char* text) {
  if (text == nullptr || *text < '0' || *text > '9') return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || value > INT_MAX) return std::nullopt;
  return static_cast<int>(value);
}

std::optional<int> launcher_rank(const EnvironmentLookup& getenv_fn) {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    if (auto rank = parse_non_negative_int(getenv_fn(name))) return rank;
  }
  return std::nullopt;
}

std::optional<int> launcher_size(const EnvironmentLookup& getenv_fn) {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"}) {
    if (auto size = parse_non_negative_int(getenv_fn(name))) return size;
  }
  return std::nullopt;
}

namespace {

// Read while the program starts, before MPI_Init: Open MPI's MPI_Init of a process started
// alone (a singleton) sets PMIX_RANK itself.
const bool kStartedByLauncher = launcher_rank([](const char* name) { return std::getenv(name); }).has_value();

}  // namespace

bool started_by_launcher() { return kStartedByLauncher; }

}  // namespace commbench
