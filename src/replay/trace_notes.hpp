// What a reading of ranks' traces says of itself, once, as notes beside the report: what it
// could not time, how it linked calls to their runs, what the traces do not record.
#pragma once

#include <string>
#include <vector>

#include "commbench/replay/communication_trace.hpp"

namespace commbench {

// Calls with no run of their own: counted, not timed, since a call's own range is when it
// was queued.
void note_calls_without_a_run(const std::vector<RankTrace>& traces, std::vector<std::string>& notes);

// How a CPU job's exposed time was read.
void note_exposed_on_cpu(const std::vector<RankTrace>& traces, std::vector<std::string>& notes);

// Runs no call claimed, runs paired by order rather than by the trace's links, and the
// sizes and groups the traces do not record.
void note_runs_and_unknowns(const std::vector<RankTrace>& traces, std::vector<std::string>& notes);

}  // namespace commbench
