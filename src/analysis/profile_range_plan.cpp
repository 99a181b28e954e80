#include "commbench/analysis/profile_range_plan.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "commbench/config.hpp"
#include "commbench/core/error.hpp"

namespace commbench {

std::vector<std::string> profile_range_notes(const std::optional<std::string>& filter, std::span<const OpCase> plan,
                                             const Backend& backend) {
  std::vector<std::string> notes;
  if (!filter) return notes;
  const bool named = std::any_of(plan.begin(), plan.end(),
                                 [&](const OpCase& c) { return describe(c).find(*filter) != std::string::npos; });
  if (!named && !plan.empty())
    throw UsageError(fmt::format("--profile-range: '{}' is in no case's name (they read like '{}')", *filter,
                                 describe(plan.front())));
  if (const std::optional<std::string> why = backend.capture_range_unavailable())
    notes.push_back(fmt::format("--profile-range: {}: no capture range is opened; a profiler still sees the "
                                "NVTX ranges",
                                *why));
  if (!COMMBENCH_HAVE_NVTX)
    notes.push_back("--profile-range: this build has no NVTX (COMMBENCH_WITH_NVTX): a profiler sees no named ranges");
  return notes;
}

}  // namespace commbench
