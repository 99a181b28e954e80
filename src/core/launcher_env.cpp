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

}  // namespace commbench
