// --dump-schedule: a rank's schedule as JSON lines, one object a line per collective and
// peer step (compute steps too when asked), for people and for tools such as jq.
#pragma once

#include <string>

#include "commbench/pattern/schedule.hpp"

namespace commbench {

// Each line: {"step", "rank", "kind", "op", "bytes", "dtype", "group", "stream", "phase",
// "label", "layer", "micro_batch", "waits_for"} plus "redop" for reducing collectives,
// "distribution" for alltoallv, "round" and "transfers" for peer steps, "seconds" for
// compute. "bytes" follows nccl-tests: the whole buffer, the gathered output for
// allgather, the input for reducescatter, each message for a peer step. "step" is the
// index that other lines' "waits_for" name (a waited-for compute step is listed only with
// `with_compute`).
std::string schedule_json_lines(const RankSchedule& schedule, bool with_compute = false);

}  // namespace commbench
