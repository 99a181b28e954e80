#include "trace_notes.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "commbench/core/number_text.hpp"

namespace commbench {

// Calls the backend's runs did not time: they are counted, not timed, since a
// call's own range is when it was queued. Said for some calls, or for all.
void note_calls_without_a_run(const std::vector<RankTrace>& traces, std::vector<std::string>& notes) {
  std::size_t alone = 0, calls = 0;
  for (const RankTrace& trace : traces) {
    calls += trace.collectives.size();
    alone += static_cast<std::size_t>(std::count_if(trace.collectives.begin(), trace.collectives.end(),
                                                    [](const TracedCollective& c) { return !c.timed_by_backend; }));
  }
  if (alone == 0) return;
  if (alone == calls)
    notes.push_back(
        "no call has a time of its own: the traces hold no NCCL kernel (CUDA activity was not recorded: "
        "torch.profiler's ProfilerActivity.CUDA, nsys --trace=cuda; or the job ran on one rank, where NCCL runs a "
        "call as a copy, not in one of its kernels) and no gloo range, and a call's own range is when it was queued; "
        "the calls are counted, not timed, and waits and the straggler are from when each rank called");
  else
    notes.push_back(fmt::format(
        "{} of {} calls found no kernel or backend range of their own (it moved nothing, ran outside the capture, or "
        "NCCL ran the calls of one group, ncclGroupStart to ncclGroupEnd, in one kernel): they are counted, not timed, "
        "and time, bandwidth and comm ms are the timed calls'",
        alone, calls));
  const auto other_host =
      std::find_if(traces.begin(), traces.end(), [&](const RankTrace& t) { return t.host != traces.front().host; });
  if (other_host != traces.end())
    notes.push_back(fmt::format(
        "the ranks ran on several hosts ({}, {}, ...): for the calls without a time of their own, when each rank "
        "called is read from its host's clock, so the clocks' offset is in their waits and the straggler",
        traces.front().host, other_host->host));
}

// How a CPU job's exposed time was read, said once.
void note_exposed_on_cpu(const std::vector<RankTrace>& traces, std::vector<std::string>& notes) {
  if (std::any_of(traces.begin(), traces.end(), [](const RankTrace& t) { return t.exposed_on_the_training_thread; }))
    notes.push_back(
        "exposed ms of a CPU job: the time the backend's ranges (gloo:*) ran while the thread that called the "
        "collectives ran no aten:: operator; it waited for them, or ran Python between operators");
}

namespace {

std::size_t count_calls(const std::vector<RankTrace>& traces, bool (*unknown)(const TracedCollective&)) {
  std::size_t count = 0;
  for (const RankTrace& trace : traces)
    count += static_cast<std::size_t>(std::count_if(trace.collectives.begin(), trace.collectives.end(), unknown));
  return count;
}

void note_unclaimed_runs(const std::vector<RankTrace>& traces, std::vector<std::string>& notes) {
  std::size_t runs = 0;
  double seconds = 0;
  for (const RankTrace& trace : traces) {
    runs += trace.unclaimed_runs;
    seconds += trace.unclaimed_seconds;
  }
  if (runs == 0) return;
  const bool kernels = std::any_of(traces.begin(), traces.end(), [](const RankTrace& t) { return t.backend == "nccl"; });
  notes.push_back(fmt::format(
      "{} ({} ms) of {} belong to no call (launched before the capture began, or by a call the trace does not "
      "mark): they are in comm ms, not in the calls' table",
      count_text(runs, kernels ? "kernel" : "range"), significant_text(seconds * 1e3, 4),
      kernels ? "NCCL time" : "the backend's time"));
}

}  // namespace

void note_runs_and_unknowns(const std::vector<RankTrace>& traces, std::vector<std::string>& notes) {
  note_unclaimed_runs(traces, notes);
  const bool by_order = std::any_of(traces.begin(), traces.end(), [](const RankTrace& t) {
    return t.pairing == "order" && t.backend == "nccl";
  });
  if (by_order)
    notes.push_back(
        "NCCL kernels were paired with calls by name and time order: the traces hold no CPU launch linking a kernel "
        "to its call (torch.profiler records them with ProfilerActivity.CPU and CUDA together)");
  const std::size_t calls = count_calls(traces, [](const TracedCollective&) { return true; });
  if (const std::size_t unsized = count_calls(traces, [](const TracedCollective& c) { return !c.bytes_known; }))
    notes.push_back(fmt::format(
        "{} of {} calls have no size in the traces (shown ?): torch.profiler records sizes with record_shapes=True, "
        "and newer PyTorch records every NCCL call's on record_param_comms",
        unsized, calls));
  if (const std::size_t ungrouped = count_calls(traces, [](const TracedCollective& c) { return c.group_ranks == 0; }))
    notes.push_back(fmt::format(
        "{} of {} calls' process group is not in the traces (shown ?, so no busbw): newer PyTorch records it "
        "(record_param_comms' Group size, distributedInfo's pg_config)",
        ungrouped, calls));
}

}  // namespace commbench
