// One measured step as a Chrome trace (the JSON trace-event format Perfetto and
// chrome://tracing open): bench-patterns --trace FILE. Each rank is a process, each of
// its streams a thread, each item of the schedule a complete ("X") event from when it
// could start (its stream predecessor's end, or the last event it waits on) to its end,
// with its op, group, bytes, phase, layer and micro-batch as arguments. Times are
// microseconds from the rank's own step start: ranks' clocks are not compared.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "commbench/pattern/schedule.hpp"
#include "commbench/pattern/step_accounting.hpp"

namespace commbench {

// The events of one rank's step, as JSON objects separated by commas (no brackets), so
// that ranks' fragments can be gathered as text and joined. `process_name` labels the
// rank ("rank 3 (host node07)"). Compute steps of no time are left out: they do not run.
std::string rank_trace_events(const RankSchedule& schedule, std::span<const ItemTiming> timings, int rank,
                              const std::string& process_name);

// The whole trace file from every rank's fragment: {"traceEvents": [...], "displayTimeUnit":
// "ms", "otherData": {...}} with `description` in otherData.
std::string chrome_trace(const std::vector<std::string>& rank_fragments, const std::string& description);

}  // namespace commbench
