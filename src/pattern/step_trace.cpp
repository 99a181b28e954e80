#include "commbench/pattern/step_trace.hpp"

#include <map>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "commbench/core/error.hpp"

namespace commbench {
namespace {

// What the event is called on its track: the schedule's label when it has one.
std::string event_name(const ScheduleStep& step) {
  if (!step.label.empty()) return step.label;
  if (step.kind == StepKind::compute) return "compute";
  if (step.kind == StepKind::peer) return "send/recv";
  return std::string(name_of(step.op));
}

std::string category_of(const ScheduleStep& step) {
  if (step.kind == StepKind::compute) return "compute";
  const std::string op = step.kind == StepKind::peer ? "sendrecv" : std::string(name_of(step.op));
  return op + "/" + std::string(name_of(step.group));
}

nlohmann::ordered_json arguments_of(const ScheduleStep& step) {
  nlohmann::ordered_json args;
  args["phase"] = name_of(step.phase);
  if (step.kind != StepKind::compute) {
    args["op"] = step.kind == StepKind::peer ? "sendrecv" : name_of(step.op);
    args["group"] = name_of(step.group);
    args["bytes"] = step.bytes;
  } else {
    args["requested_ms"] = step.compute_seconds * 1e3;
  }
  if (step.layer >= 0) args["layer"] = step.layer;
  if (step.micro_batch >= 0) args["micro_batch"] = step.micro_batch;
  return args;
}

nlohmann::ordered_json metadata(const char* name, int rank, int thread, const std::string& value) {
  nlohmann::ordered_json event = {{"name", name}, {"ph", "M"}, {"pid", rank}};
  if (thread >= 0) event["tid"] = thread;
  event["args"] = {{"name", value}};
  return event;
}

}  // namespace

std::string rank_trace_events(const RankSchedule& schedule, std::span<const ItemTiming> timings, int rank,
                              const std::string& process_name) {
  if (timings.size() != schedule.steps.size())
    throw UsageError(fmt::format("trace: {} timings for {} steps", timings.size(), schedule.steps.size()));
  // Threads numbered in order of first use: compute first when the step starts with it.
  std::map<std::string, int> thread_of;
  std::string events = metadata("process_name", rank, -1, process_name).dump();
  for (std::size_t i = 0; i < schedule.steps.size(); ++i) {
    const ScheduleStep& step = schedule.steps[i];
    if (step.kind == StepKind::compute && step.compute_seconds <= 0) continue;
    const auto [found, added] = thread_of.try_emplace(step.stream, static_cast<int>(thread_of.size()));
    if (added) {
      events += ',';
      events += metadata("thread_name", rank, found->second, step.stream).dump();
    }
    const double begin_us = std::max(0.0, timings[i].ready_seconds) * 1e6;
    const double end_us = std::max(begin_us, timings[i].end_seconds * 1e6);
    nlohmann::ordered_json event = {{"name", event_name(step)}, {"cat", category_of(step)},  {"ph", "X"},
                                    {"ts", begin_us},           {"dur", end_us - begin_us},  {"pid", rank},
                                    {"tid", found->second},     {"args", arguments_of(step)}};
    events += ',';
    events += event.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  }
  return events;
}

std::string chrome_trace(const std::vector<std::string>& rank_fragments, const std::string& description) {
  std::string joined;
  for (const std::string& fragment : rank_fragments)
    if (!fragment.empty()) joined += (joined.empty() ? "" : ",\n") + fragment;
  const nlohmann::ordered_json other = {{"generator", "bench-patterns"}, {"step", description}};
  return "{\"traceEvents\": [\n" + joined + "\n], \"displayTimeUnit\": \"ms\", \"otherData\": " +
         other.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "}\n";
}

}  // namespace commbench
