// A job's traced step as bench-patterns' schedule (schedule.hpp), for --dump-schedule and
// bench-patterns --schedule: each rank's calls in its order, with what the training
// thread did between them standing in as compute.
#pragma once

#include <string>
#include <vector>

#include "commbench/pattern/schedule.hpp"
#include "commbench/replay/communication_trace.hpp"

namespace commbench {

// One schedule per trace, by rank. The calls of the first profiler step that holds any
// (all calls when the trace has no step), each after a compute step as long as the time
// from the previous call's issue (or the step's start) to its own: the thread's work
// between the two, waiting included, for a CPU trace does not say where the thread
// waited. A last compute step runs to the step's end. Every call is over the data group,
// which is every rank; a barrier becomes an allreduce of one float, as NCCL's is.
// UsageError for calls this cannot replay: point-to-point, a group of fewer ranks, or, for
// a schedule to run, one the trace does not name (gloo's trace of a job with groups of
// several sizes); each names the flag that asked for the schedule. `notes` gets the
// approximations made.
struct ScheduleUse {
  std::string flag = "--dump-schedule";  // --dump-schedule, --replay, or the model flag
  bool runs = true;                      // false: only compared with a model, never run
};
std::vector<RankSchedule> extract_schedules(const std::vector<RankTrace>& traces, std::vector<std::string>& notes,
                                            const ScheduleUse& use = {});

}  // namespace commbench
