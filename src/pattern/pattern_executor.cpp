#include "commbench/pattern/pattern_executor.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "commbench/backend/collective_try.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/core/profile_range.hpp"
#include "commbench/runner/collective_buffers.hpp"

namespace commbench {
namespace {

// The origin every item's times are taken from; no item is ever enqueued on it.
constexpr const char* kOriginStream = "pattern-origin";

// The calibration of the compute stand-in: its correction is a fixed offset (the cost of
// starting a task and seeing its end), so two short durations find it; five repeats each
// keep one early wake-up from setting it (docs/backend-extensions.md).
constexpr std::array<double, 2> kCalibrationSeconds{0.5e-3, 2e-3};
constexpr int kCalibrationRepeats = 5;

std::string step_name(std::size_t index, const ScheduleStep& step) {
  return step.label.empty() ? fmt::format("step {}", index) : fmt::format("step {} ({})", index, step.label);
}

}  // namespace

OpCase op_case_for(const ScheduleStep& step, int group_ranks) {
  OpCase op_case;
  op_case.op = step.op;
  op_case.dtype = step.dtype;
  op_case.redop = reduces(step.op) ? (step.redop == ReduceOp::none ? ReduceOp::sum : step.redop) : ReduceOp::none;
  op_case.root = has_root(step.op) ? 0 : -1;
  op_case.placement = Placement::out_of_place;
  op_case.distribution = step.distribution;
  op_case.shape = shape_for(step.op, step.bytes, size_of(step.dtype), group_ranks, step.distribution);
  op_case.requested_bytes = step.bytes;
  return op_case;
}

PatternStepWorkload::PatternStepWorkload(PatternGroups& groups, RankSchedule schedule, std::string description)
    : groups_(groups), schedule_(std::move(schedule)), description_(std::move(description)) {
  const std::size_t count = schedule_.steps.size();
  stream_predecessor_.assign(count, -1);
  cases_.resize(count);
  backend_of_.assign(count, nullptr);
  buffers_of_.assign(count, nullptr);
  std::map<std::string, std::ptrdiff_t, std::less<>> last_on_stream;
  for (std::size_t i = 0; i < count; ++i) {
    const ScheduleStep& step = schedule_.steps[i];
    if (step.stream.empty() || step.stream == kOriginStream)
      throw UsageError("pattern schedule: " + step_name(i, step) + " needs a stream name other than \"" +
                       kOriginStream + "\"");
    for (const std::size_t earlier : step.waits_for)
      if (earlier >= i)
        throw UsageError(fmt::format("pattern schedule: {} waits for step {}, which is not an earlier step",
                                     step_name(i, step), earlier));
    if (step.kind == StepKind::peer && step.peer_round >= schedule_.peer_rounds.size())
      throw UsageError(fmt::format("pattern schedule: {} names peer round {} of {}", step_name(i, step),
                                   step.peer_round, schedule_.peer_rounds.size()));
    if (step.kind == StepKind::collective && step.bytes == 0)
      throw UsageError("pattern schedule: " + step_name(i, step) + " moves no bytes");
    if (step.kind == StepKind::compute && step.compute_seconds < 0)
      throw UsageError("pattern schedule: " + step_name(i, step) + " computes for a negative time");
    auto [found, inserted] = last_on_stream.try_emplace(step.stream, static_cast<std::ptrdiff_t>(i));
    if (!inserted) stream_predecessor_[i] = std::exchange(found->second, static_cast<std::ptrdiff_t>(i));
  }
}

PatternStepWorkload::~PatternStepWorkload() = default;

OpCase PatternStepWorkload::carried_case(Backend& backend, const ScheduleStep& step, std::size_t index) {
  OpCase wanted = op_case_for(step, backend.ranks());
  const auto why = backend.unsupported_reason(step.op, step.dtype, wanted.redop);
  if (!why) return wanted;
  // MPI has no 16- or 8-bit floating-point type, yet every training step moves bf16: the
  // host backend carries such data as float32 elements of the same bytes. The traffic is
  // the pattern's; only the reduction's arithmetic is float32's.
  if (size_of(step.dtype) < size_of(DataType::float32)) {
    ScheduleStep carried = step;
    carried.dtype = DataType::float32;
    OpCase substitute = op_case_for(carried, backend.ranks());
    if (!backend.unsupported_reason(carried.op, carried.dtype, substitute.redop)) {
      const std::string note = "the " + backend.name() + " backend carries " + std::string(name_of(step.dtype)) +
                               " data as float32 elements of the same bytes (it has no such type)";
      if (std::find(notes_.begin(), notes_.end(), note) == notes_.end()) notes_.push_back(note);
      return substitute;
    }
  }
  throw UsageError("pattern schedule: " + step_name(index, step) + ": " + *why);
}

void PatternStepWorkload::prepare() {
  // Cases first, so an impossible combination fails before any memory is taken.
  // Agreed over the job: a case one rank cannot carry (its GPU lacks a type) must not
  // leave the others waiting in the memory check below.
  std::array<BufferRequirement, kGroupRoleCount> needed{};
  collective_try(groups_.world().group(), [&] {
    for (std::size_t i = 0; i < schedule_.steps.size(); ++i) {
      const ScheduleStep& step = schedule_.steps[i];
      if (step.kind != StepKind::collective) continue;
      Backend& backend = groups_.backend(step.group);
      backend_of_[i] = &backend;
      cases_[i] = carried_case(backend, step, i);
      BufferRequirement& need = needed[static_cast<std::size_t>(step.group)];
      need.send_bytes = std::max(need.send_bytes, cases_[i].send_bytes());
      need.recv_bytes = std::max(need.recv_bytes, cases_[i].recv_bytes());
    }
  });
  // All of them at once, checked before the first is taken: each group's buffers may fit
  // alone while together they exceed the node (the kernel's OOM killer would end the job).
  std::uint64_t total = 0;
  for (const BufferRequirement& need : needed) total += need.total();
  // Collectives on different streams run at once, each with its own scratch: the largest
  // of each stream, added up.
  std::map<std::string, std::uint64_t> scratch_of_stream;
  for (std::size_t i = 0; i < schedule_.steps.size(); ++i) {
    if (backend_of_[i] == nullptr) continue;
    std::uint64_t& scratch = scratch_of_stream[schedule_.steps[i].stream];
    scratch = std::max(scratch, backend_of_[i]->library_scratch_bytes(cases_[i]));
  }
  for (const auto& [stream, scratch] : scratch_of_stream) total += scratch;
  groups_.world().require_memory(
      total, "the step's buffers and the library's scratch (their sizes follow --params, --layers, --hidden, --seq)");
  // One pair of buffers per group, in GroupRole order: every member of a group runs the
  // same collectives over it, so each allocation (collective over the group) is matched.
  // Items over one group share it; the data they carry is never checked.
  std::array<Buffers*, kGroupRoleCount> group_buffers{};
  for (int index = 0; index < kGroupRoleCount; ++index) {
    const BufferRequirement& need = needed[static_cast<std::size_t>(index)];
    if (need.total() == 0) continue;
    Backend& backend = groups_.backend(static_cast<GroupRole>(index));
    std::vector<OpCase> plan;
    for (std::size_t i = 0; i < schedule_.steps.size(); ++i)
      if (backend_of_[i] == &backend) plan.push_back(cases_[i]);
    backend.validate_plan(plan);
    buffers_.push_back(backend.allocate(need.send_bytes, need.recv_bytes));
    group_buffers[static_cast<std::size_t>(index)] = buffers_.back().get();
  }
  for (std::size_t i = 0; i < schedule_.steps.size(); ++i)
    if (schedule_.steps[i].kind == StepKind::collective)
      buffers_of_[i] = group_buffers[static_cast<std::size_t>(schedule_.steps[i].group)];

  // Creating an exchange is collective over its group: every member lists the same rounds
  // in the same order.
  for (const PlannedPeerRound& planned : schedule_.peer_rounds) {
    Backend& backend = groups_.backend(planned.group);
    std::vector<Transfer> transfers;
    for (const auto& [source, destination] : planned.transfers) transfers.push_back({source, destination});
    exchanges_.push_back(
        backend.peer_exchange(PeerRound(std::move(transfers), backend.ranks()), planned.message_bytes));
  }

  streams_ = groups_.world().streams();
  compute_occupies_ = streams_->compute().occupies();
  const bool computes = std::any_of(schedule_.steps.begin(), schedule_.steps.end(),
                                    [](const ScheduleStep& step) { return step.kind == StepKind::compute; });
  if (computes) calibration_ = streams_->compute().calibrate(kCalibrationSeconds, kCalibrationRepeats);
  ends_.assign(schedule_.steps.size(), StreamEvent{});
  timings_.assign(schedule_.steps.size(), ItemTiming{});
}

std::string PatternStepWorkload::item_name(std::size_t index) const {
  const ScheduleStep& step = schedule_.steps[index];
  const std::string where = fmt::format("{} {}", name_of(step.phase), step.label);
  switch (step.kind) {
    case StepKind::collective: return fmt::format("{}: {} on {}", where, commbench::describe(cases_[index]), step.stream);
    case StepKind::peer: return fmt::format("{}: peer round on {}", where, step.stream);
    case StepKind::compute: break;
  }
  return fmt::format("{}: compute {} ms", where, significant_text(step.compute_seconds * 1e3, 3));
}

void PatternStepWorkload::run_step() {
  const ProfileRange step_range([&] { return fmt::format("step {}", steps_run_); });
  ++steps_run_;
  if (profiler_attached() && item_names_.empty())
    for (std::size_t i = 0; i < schedule_.steps.size(); ++i) item_names_.push_back(item_name(i));
  StreamSet& streams = *streams_;
  // The last step's times were read: its events can be recorded again.
  streams.forget_events();
  // Every stream drained at the end of the last step: the origin stands for each one's start.
  const StreamEvent origin = streams.record(kOriginStream);
  for (std::size_t i = 0; i < schedule_.steps.size(); ++i) {
    const ScheduleStep& step = schedule_.steps[i];
    const ProfileRange item_range([&]() -> const std::string& { return item_names_[i]; });
    for (const std::size_t earlier : step.waits_for)
      if (schedule_.steps[earlier].stream != step.stream) streams.wait(step.stream, ends_[earlier]);
    switch (step.kind) {
      case StepKind::collective: streams.enqueue(step.stream, *backend_of_[i], cases_[i], *buffers_of_[i]); break;
      case StepKind::peer: streams.enqueue(step.stream, *exchanges_[step.peer_round]); break;
      case StepKind::compute:
        // No compute asked for (--compute-ms 0): the stand-in is not started at all, since
        // even an empty task costs its thread's wake-up; the step keeps its place in order.
        if (step.compute_seconds > 0) streams.enqueue_compute(step.stream, step.compute_seconds);
        break;
    }
    ends_[i] = streams.record(step.stream);
  }
  streams.synchronize_all();

  for (std::size_t i = 0; i < schedule_.steps.size(); ++i) {
    ItemTiming& timing = timings_[i];
    timing.end_seconds = streams.elapsed_seconds(origin, ends_[i]);
    const std::ptrdiff_t before = stream_predecessor_[i];
    timing.ready_seconds = before < 0 ? 0.0 : timings_[static_cast<std::size_t>(before)].end_seconds;
    for (const std::size_t earlier : schedule_.steps[i].waits_for)
      timing.ready_seconds = std::max(timing.ready_seconds, timings_[earlier].end_seconds);
  }
  steps_.push_back(account_step(schedule_, timings_));
}

double PatternStepWorkload::time(std::uint64_t iterations) {
  const auto begin = std::chrono::steady_clock::now();
  for (std::uint64_t i = 0; i < iterations; ++i) run_step();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
}

void PatternStepWorkload::release() {
  if (streams_) streams_->synchronize_all();
  streams_.reset();
  exchanges_.clear();
  buffers_.clear();
  std::fill(buffers_of_.begin(), buffers_of_.end(), nullptr);
}

}  // namespace commbench
