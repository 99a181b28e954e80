// A pattern's step run on the job's ranks once its configuration is known: the step
// built for each rank, --dump-schedule, --tune, the groups split, the timed steps and
// their report and files. bench-patterns resolves the configuration from its model
// flags; bench-replay --replay from the job's own traced step.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "commbench/cli/job_session.hpp"
#include "commbench/pattern/pattern_config.hpp"
#include "commbench/pattern/pattern_report.hpp"
#include "pattern_options.hpp"

namespace commbench {

// The layout of a pattern step's JSON, whichever command ran the step.
inline constexpr const char* kPatternsSchema = "commbench.patterns/2";

// The run's settings as the result files state them; `backend`, the one that ran (none
// for a prediction: the flag as given).
std::vector<std::pair<std::string, std::string>> describe(const PatternRunOptions& options, const PatternConfig& config,
                                                          const Backend* backend = nullptr);

// Runs `config`'s step under `session` as bench-patterns does; `notes` join the report's,
// `program` is no longer read (the session says a late error), and `after_report` (the reporting process only)
// may print more once the step's report is printed.
int run_resolved_pattern(const char* program, const PatternRunOptions& options, JobSession& session,
                         const PatternConfig& config, const std::vector<std::string>& notes,
                         const std::function<void(const PatternReport&)>& after_report = {});

}  // namespace commbench
