// A rank's calls with their sizes, groups and runs, once its trace is read: the calls as
// the markers make them (marked_calls.hpp), each with the runs the trace links to it.
#include <algorithm>
#include <iterator>
#include <map>
#include <optional>

#include "call_pairing.hpp"
#include "marked_calls.hpp"
#include "pytorch_comm_events.hpp"
#include "time_intervals.hpp"

namespace commbench {

namespace {

using Call = PytorchCommEvents::Call;

std::optional<Collective> collective_of(const std::string& op) {
  static const std::map<std::string, Collective, std::less<>> kCollectives{{"allreduce", Collective::allreduce},
                                                                           {"allgather", Collective::allgather},
                                                                           {"reducescatter", Collective::reducescatter},
                                                                           {"broadcast", Collective::broadcast},
                                                                           {"reduce", Collective::reduce},
                                                                           {"alltoall", Collective::alltoall}};
  const auto found = kCollectives.find(op);
  if (found == kCollectives.end()) return std::nullopt;
  return found->second;
}

// The elements of nccl-tests' buffer that `source` says: gloo's ranges and ProcessGroupNCCL's
// own hold one rank's part of an all-gather, the whole only once the group is known.
std::optional<std::uint64_t> buffer_elements(const Call& source, const std::string& op, int group_ranks) {
  if (!source.elements_known) return std::nullopt;
  const bool one_part =
      op == "allgather" && (source.name.rfind("gloo:", 0) == 0 || source.name.rfind("nccl:", 0) == 0);
  if (!one_part) return source.elements;
  if (group_ranks <= 0) return std::nullopt;
  return source.elements * static_cast<std::uint64_t>(group_ranks);
}

// The first of `sources` that knows the call's type, and the first that knows its size;
// what none of them says stays unknown (TracedCollective::bytes_known).
void size_call(TracedCollective& c, std::initializer_list<const Call*> sources) {
  std::size_t dtype_bytes = 0;
  for (const Call* source : sources)
    if (source != nullptr && !source->dtype.empty()) {
      c.dtype = source->dtype;
      dtype_bytes = source->dtype_bytes;
      break;
    }
  std::optional<std::uint64_t> elements;
  for (const Call* source : sources)
    if (source != nullptr && (elements = buffer_elements(*source, c.op, c.group_ranks))) break;
  c.bytes = elements.value_or(0) * dtype_bytes;
  c.bytes_known = elements && (dtype_bytes > 0 || *elements == 0);
  if (c.bytes > 0) return;
  for (const Call* source : sources)
    if (source != nullptr && source->bytes) {
      c.bytes = *source->bytes;
      c.bytes_known = true;
      break;
    }
}

// The marker a call's operation is read from: the dispatcher's, else NCCL's range, else
// the record.
const Call& named_marker(const MarkedCall& call) {
  if (call.op != nullptr) return *call.op;
  if (call.annotation != nullptr) return *call.annotation;
  return call.record != nullptr ? *call.record : *call.outer;
}

int group_of(const MarkedCall& call, int common_group) {
  for (const Call* source : {call.record, call.op, call.annotation})
    if (source != nullptr && source->group_ranks > 0) return source->group_ranks;
  return common_group;
}

TracedCollective traced(const MarkedCall& call, int common_group, const std::vector<StepWindow>& windows) {
  const Call& named = named_marker(call);
  TracedCollective c;
  c.op = named.op;
  c.name = call.outer->name;
  if (const auto collective = collective_of(c.op)) c.collective = *collective;
  c.group_ranks = group_of(call, common_group);
  size_call(c, {call.op, call.record, call.annotation, call.runs.empty() ? nullptr : call.runs.front()});
  c.issued_us = call.outer->ts;
  c.thread = call.outer->thread;
  if (call.record != nullptr) {
    c.sequence = call.record->sequence;
    c.process_group = call.record->process_group;
  }
  c.start_us = call.outer->ts;
  c.end_us = call.outer->ts + call.outer->dur;
  if (!call.runs.empty()) {
    std::vector<TimeInterval> busy;
    for (const Call* run : call.runs) busy.emplace_back(run->ts, run->ts + run->dur);
    busy = merged_intervals(std::move(busy));
    c.start_us = busy.front().first;
    c.end_us = busy.back().second;
    c.run_us = total_length(busy);
    c.timed_by_backend = true;
    // A kernel named after another operation (NCCL 2.12 to 2.18 name every kernel after the
    // first function compiled into it) says nothing of this call's algorithm.
    // NCCL runs a barrier as an all-reduce of one element: that kernel is its own.
    const auto own = std::find_if(call.runs.begin(), call.runs.end(), [&](const Call* run) {
      return run->op == c.op || (c.op == "barrier" && run->op == "allreduce");
    });
    if (own != call.runs.end()) {
      c.nccl_algo = (*own)->algo;
      c.nccl_proto = (*own)->proto;
    }
  }
  for (const StepWindow& window : windows)
    if (c.issued_us >= window.start_us && c.issued_us <= window.end_us) c.step = window.number;
  return c;
}

// Calls made of the backend's own runs, for a trace with no marker at all (a backend that
// runs on the calling thread). NCCL's generic kernel names no operation: alone, it is no
// call anyone could name.
std::vector<MarkedCall> calls_of_runs(const PytorchCommEvents::CallList& runs) {
  std::vector<MarkedCall> calls;
  for (const Call& run : runs)
    if (!run.op.empty()) calls.push_back({&run, nullptr, nullptr, &run, {&run}});
  return calls;
}

}  // namespace

TracedCommunication PytorchCommEvents::traced_communication(int group_ranks) const {
  TracedCommunication out;
  std::vector<MarkedCall> calls = marked_calls(calls_, annotations_, params_);
  const bool nccl = has_nccl_kernels();
  // The kernels where the trace's reading keeps them: a trace holds many, and calls point at them.
  std::vector<const Call*> kernels;
  for (const Call& run : runs_)
    if (is_nccl_kernel(run)) kernels.push_back(&run);
  const LaunchLinks links = link_kernels_by_launch(calls, kernels, launches_);
  std::vector<const Call*> unclaimed;
  // Runs the trace does not link to their calls are paired by order: kept alive here, since
  // calls point into it.
  std::optional<CallPairing> by_order;
  if (links.linked) {
    out.pairing = "launch";
    unclaimed = links.unclaimed;
    std::vector<Call> gloo;
    std::copy_if(runs_.begin(), runs_.end(), std::back_inserter(gloo), [](const Call& run) { return !is_nccl_kernel(run); });
    by_order.emplace(std::move(gloo));
    for (MarkedCall& call : calls)
      if (call.runs.empty() && call.record == nullptr)
        if (const Call* run = by_order->take(*call.outer, RunKind::gloo)) call.runs.push_back(run);
  } else if (calls.empty()) {
    calls = calls_of_runs(runs_);
    if (!calls.empty()) out.pairing = "order";
  } else {
    by_order.emplace(std::vector<Call>(runs_.begin(), runs_.end()));
    for (MarkedCall& call : calls)
      if (const Call* run = run_of(named_marker(call), call.record, !params_.empty(), *by_order))
        call.runs.push_back(run);
    if (!runs_.empty()) out.pairing = by_order->linked() ? "external id" : "order";
    for (const Call* run : by_order->untaken())
      if (!nccl || is_nccl_kernel(*run)) unclaimed.push_back(run);
  }
  const std::vector<StepWindow> windows = steps();
  out.collectives.reserve(calls.size());  // one buffer: a trace of a GiB holds a hundred thousand
  for (const MarkedCall& call : calls) out.collectives.push_back(traced(call, group_ranks, windows));
  std::vector<TimeInterval> busy;
  for (const Call& run : runs_)
    if (!nccl || is_nccl_kernel(run)) busy.emplace_back(run.ts, run.ts + run.dur);
  out.backend_busy_us = merged_intervals(std::move(busy));
  out.unclaimed_runs = unclaimed.size();
  for (const Call* run : unclaimed) out.unclaimed_seconds += run->dur * 1e-6;
  return out;
}

std::vector<TracedCollective> PytorchCommEvents::collectives(int group_ranks) const {
  return traced_communication(group_ranks).collectives;
}

}  // namespace commbench
