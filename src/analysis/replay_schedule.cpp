#include "commbench/analysis/replay_schedule.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "commbench/core/error.hpp"

namespace commbench {

namespace {

// The calls of the first profiler step that holds any, or all without steps, and that
// step's window.
struct StepCalls {
  std::vector<const TracedCollective*> calls;
  std::optional<StepWindow> window;
};

StepCalls calls_of_one_step(const RankTrace& trace) {
  StepCalls chosen;
  int step = -1;
  for (const TracedCollective& call : trace.collectives)
    if (call.step >= 0) {
      step = call.step;
      break;
    }
  for (const TracedCollective& call : trace.collectives)
    if (step < 0 || call.step == step) chosen.calls.push_back(&call);
  for (const StepWindow& window : trace.steps)
    if (window.number == step) chosen.window = window;
  return chosen;
}

ScheduleStep compute_step(double seconds, std::string label) {
  ScheduleStep step;
  step.kind = StepKind::compute;
  step.stream = "compute";
  step.phase = StepPhase::forward;
  step.label = std::move(label);
  step.compute_seconds = std::max(0.0, seconds);
  return step;
}

DataType data_type_of(const TracedCollective& call, bool& guessed) {
  try {
    if (!call.dtype.empty()) return parse_data_type(call.dtype, "dtype");
  } catch (const UsageError&) {
  }
  guessed = true;
  return DataType::uint8;
}

ScheduleStep collective_step(const RankTrace& trace, const TracedCollective& call, std::size_t index,
                             bool& guessed_type, const ScheduleUse& use) {
  const std::string& flag = use.flag;
  ScheduleStep step;
  step.kind = StepKind::collective;
  step.group = GroupRole::data;
  step.stream = "data";
  step.phase = StepPhase::forward;
  step.label = fmt::format("call {} ({})", index + 1, call.name);
  if (call.group_ranks == 0 && use.runs)
    throw UsageError(
        fmt::format("{}: {}: call {} ({}) runs on a process group the trace does not name (the job's groups have "
                    "several sizes); only calls over every rank are replayed",
                    flag, trace.path, index + 1, call.name));
  if (call.group_ranks != 0 && call.group_ranks != trace.world_size)
    throw UsageError(
        fmt::format("{}: {}: call {} ({}) runs on a group of {} of the {} ranks; only "
                    "calls over every rank are replayed",
                    flag, trace.path, index + 1, call.name, call.group_ranks, trace.world_size));
  if (call.op == "barrier") {
    step.op = Collective::allreduce;
    step.dtype = DataType::float32;
    step.bytes = size_of(DataType::float32);
    step.redop = ReduceOp::sum;
    return step;
  }
  if (!call.collective || *call.collective == Collective::sendrecv)
    throw UsageError(fmt::format("{}: {}: call {} is {}; point-to-point calls are not replayed", flag, trace.path,
                                 index + 1, call.op));
  if (call.bytes == 0)
    throw UsageError(fmt::format(
        "{}: {}: call {} ({}) has no size in the trace (an Nsight Systems report sizes NCCL's calls by their "
        "payloads, exported with `nsys export --include-blobs=true`, or by PyTorch's ranges with record_shapes); "
        "only sized calls are replayed",
        flag, trace.path, index + 1, call.name));
  step.op = *call.collective;
  step.dtype = data_type_of(call, guessed_type);
  step.bytes = call.bytes;
  step.redop = reduces(step.op) ? ReduceOp::sum : ReduceOp::none;
  return step;
}

RankSchedule schedule_of(const RankTrace& trace, bool& guessed_type, bool& without_step, const ScheduleUse& use) {
  RankSchedule schedule;
  schedule.world_rank = trace.rank;
  const StepCalls chosen = calls_of_one_step(trace);
  without_step |= !chosen.window;
  double previous =
      chosen.window ? chosen.window->start_us : (chosen.calls.empty() ? 0.0 : chosen.calls.front()->issued_us);
  for (std::size_t i = 0; i < chosen.calls.size(); ++i) {
    const TracedCollective& call = *chosen.calls[i];
    schedule.steps.push_back(compute_step((call.issued_us - previous) * 1e-6, fmt::format("before call {}", i + 1)));
    ScheduleStep step = collective_step(trace, call, i, guessed_type, use);
    step.waits_for = {schedule.steps.size() - 1};
    schedule.steps.push_back(std::move(step));
    previous = call.issued_us;
  }
  if (chosen.window)
    schedule.steps.push_back(compute_step((chosen.window->end_us - previous) * 1e-6, "to the step's end"));
  return schedule;
}

}  // namespace

std::vector<RankSchedule> extract_schedules(const std::vector<RankTrace>& traces, std::vector<std::string>& notes,
                                            const ScheduleUse& use) {
  const std::string& flag = use.flag;
  std::vector<RankSchedule> schedules;
  bool guessed_type = false, without_step = false;
  for (const RankTrace& trace : traces) schedules.push_back(schedule_of(trace, guessed_type, without_step, use));
  std::sort(schedules.begin(), schedules.end(),
            [](const RankSchedule& a, const RankSchedule& b) { return a.world_rank < b.world_rank; });
  const int world = traces.empty() ? 0 : traces.front().world_size;
  for (std::size_t i = 0; i < static_cast<std::size_t>(world); ++i)
    if (i >= schedules.size() || schedules[i].world_rank != static_cast<int>(i))
      throw UsageError(fmt::format("{}: rank {}'s trace is missing: a schedule needs every rank's", flag, i));
  notes.push_back(
      fmt::format("{}: the compute between calls is the time from one call's issue to the next, "
                  "waiting included (a trace does not say where the training thread waited)",
                  flag));
  if (without_step) notes.push_back(flag + ": a trace without profiler steps: all its calls are one step");
  if (guessed_type) notes.push_back(flag + ": calls of an element type not known are replayed as bytes");
  return schedules;
}

}  // namespace commbench
