#include "commbench/replay/trace_summary.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "call_arrival.hpp"
#include "call_matching.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/number_text.hpp"
#include "straggler_verdict.hpp"
#include "time_intervals.hpp"
#include "wait_tally.hpp"

namespace commbench {

namespace {

// A collective ends on no rank before every rank has called it. Ranks whose matched calls
// are minutes apart (more than any clock offset or straggler) are of different runs. Times
// are compared on the epoch where every trace puts itself there.
void require_calls_to_meet(const std::vector<RankTrace>& traces, const ArrivalClock& clock) {
  constexpr double kApartUs = 60e6;
  for (std::size_t i = 0; i < traces.front().collectives.size(); ++i) {
    std::size_t ended = traces.size(), called = traces.size();
    double ended_us = 0, called_us = 0;
    for (std::size_t r = 0; r < traces.size(); ++r) {
      const TracedCollective& call = traces[r].collectives[i];
      const double end_us = call.end_us + clock.offset_us[r], issued_us = call.issued_us + clock.offset_us[r];
      // A call's end without the backend's run is when it was queued, not when it ended.
      if (call.timed_by_backend && (ended == traces.size() || end_us < ended_us)) {
        ended = r;
        ended_us = end_us;
      }
      if (called == traces.size() || issued_us > called_us) {
        called = r;
        called_us = issued_us;
      }
    }
    if (ended == traces.size()) continue;
    const double apart_us = called_us - ended_us;
    if (apart_us > kApartUs)
      throw UsageError(fmt::format(
          "call {} ({}) ended in {} {:.0f} s before {} called it: traces of different runs (or of hosts whose "
          "clocks are that far apart)",
          i + 1, traces[ended].collectives[i].op, traces[ended].path, apart_us * 1e-6, traces[called].path));
  }
}

void require_one_run(const std::vector<RankTrace>& traces) {
  const RankTrace& first = traces.front();
  std::map<int, const RankTrace*> by_rank;
  for (const RankTrace& trace : traces) {
    if (trace.world_size != first.world_size)
      throw UsageError(fmt::format("{} is rank {} of {} ranks, {} of {}: traces of different runs", trace.path,
                                   trace.rank, trace.world_size, first.path, first.world_size));
    const auto [at, added] = by_rank.emplace(trace.rank, &trace);
    if (!added) throw UsageError(fmt::format("{} and {} are both rank {}", at->second->path, trace.path, trace.rank));
  }
}

struct ClassKey {
  std::string op, dtype;
  std::uint64_t bytes;
  bool bytes_known;
  int group;
  bool operator<(const ClassKey& o) const {
    return std::tie(op, dtype, bytes, bytes_known, group) < std::tie(o.op, o.dtype, o.bytes, o.bytes_known, o.group);
  }
};

void add_bandwidth(TracedClass& c, const std::optional<Collective>& collective) {
  if (!c.seconds || *c.seconds <= 0 || c.bytes == 0) return;
  c.algbw_gbps = static_cast<double>(c.bytes) / *c.seconds * 1e-9;
  if (collective && c.group_ranks > 1) c.busbw_gbps = *c.algbw_gbps * bus_bandwidth_factor(*collective, c.group_ranks);
}

// A class's NCCL choice over its calls: the first call's, or "mixed" once another differs.
void merge_choice(std::string& held, const std::string& seen, bool first) {
  if (first)
    held = seen;
  else if (held != seen)
    held = "mixed";
}

// A rank's own figures; its communication, waiting and arrivals are added as the calls are
// matched.
RankTraceSummary rank_summary(const RankTrace& trace) {
  RankTraceSummary rank;
  rank.rank = trace.rank;
  rank.host = trace.host;
  rank.path = trace.path;
  rank.collectives = trace.collectives.size();
  rank.exposed_seconds = trace.exposed_seconds;
  rank.unclaimed_runs = trace.unclaimed_runs;
  // Its own calls' times, whether or not the other ranks' traces hold them too.
  for (const TracedCollective& call : trace.collectives)
    if (call.timed_by_backend) rank.calls_seconds = rank.calls_seconds.value_or(0) + call.seconds();
  rank.unclaimed_seconds = trace.unclaimed_seconds;
  if (!trace.steps.empty()) {
    double steps = 0;
    for (const StepWindow& step : trace.steps) steps += (step.end_us - step.start_us) * 1e-6;
    rank.step_seconds = steps;
    rank.steps = static_cast<int>(trace.steps.size());
  }
  return rank;
}

// Every step of the traces with its longest window; their calls are added as they are
// matched.
std::map<int, StepSummary> step_windows(const std::vector<RankTrace>& traces) {
  std::map<int, StepSummary> steps;
  for (const RankTrace& trace : traces)
    for (const StepWindow& window : trace.steps) {
      StepSummary& step = steps[window.number];
      step.number = window.number;
      step.step_seconds = std::max(step.step_seconds, (window.end_us - window.start_us) * 1e-6);
    }
  return steps;
}

// One call matched across the ranks, added to its step: the ranks' mean durations, when the
// backend timed it (their waits are added once every call is: WaitTally).
void add_to_step(StepSummary& step, const TracedCollective& call, const CallTiming& timing, bool timed) {
  const double ranks = static_cast<double>(timing.durations.size());
  step.calls += 1;
  step.bytes += call.bytes;
  step.bytes_known = step.bytes_known && call.bytes_known;
  for (std::size_t r = 0; r < timing.durations.size(); ++r)
    if (timed) step.communication_seconds = step.communication_seconds.value_or(0) + timing.durations[r] / ranks;
}

// The calls' classes, built as the calls are added.
struct Classes {
  std::map<ClassKey, std::size_t> index;
  std::vector<std::optional<Collective>> collective;
};

// The i-th call, matched across the ranks, added to its class: its time the shortest
// rank's (from the last arrival to the end), where the backend timed it on every rank.
void add_to_class(TraceSummary& summary, Classes& classes, const std::vector<RankTrace>& traces, std::size_t i,
                  const CallTiming& timing, bool timed) {
  const TracedCollective& call = traces.front().collectives[i];
  const ClassKey key{call.op, call.dtype, call.bytes, call.bytes_known, call.group_ranks};
  auto [at, added] = classes.index.emplace(key, summary.classes.size());
  if (added) {
    TracedClass c;
    c.op = call.op;
    c.dtype = call.dtype;
    c.bytes = call.bytes;
    c.bytes_known = call.bytes_known;
    c.group_ranks = call.group_ranks;
    c.ranks = static_cast<int>(traces.size());
    summary.classes.push_back(c);
    classes.collective.push_back(call.collective);
  }
  TracedClass& c = summary.classes[at->second];
  for (const RankTrace& trace : traces) {
    merge_choice(c.nccl_algo, trace.collectives[i].nccl_algo, c.calls == 0 && &trace == &traces.front());
    merge_choice(c.nccl_proto, trace.collectives[i].nccl_proto, c.calls == 0 && &trace == &traces.front());
  }
  ++c.calls;
  if (timed) {
    c.seconds = c.seconds.value_or(0) + timing.shortest;
    ++c.timed_calls;
  }
  for (const double wait : timing.waits) c.wait_seconds += wait / static_cast<double>(traces.size());
}

void finish_classes(TraceSummary& summary, const Classes& classes) {
  for (std::size_t k = 0; k < summary.classes.size(); ++k) {
    TracedClass& c = summary.classes[k];
    if (c.seconds) *c.seconds /= static_cast<double>(c.timed_calls);
    c.wait_seconds /= static_cast<double>(c.calls);
    add_bandwidth(c, classes.collective[k]);
  }
}

// Each trace's calls cut to those every rank shares, in the first trace's order.
void keep_matched_calls(std::vector<RankTrace>& traces, const MatchedCalls& matched) {
  for (std::size_t r = 0; r < traces.size(); ++r) {
    std::vector<TracedCollective> kept;
    kept.reserve(matched.rows.size());
    for (const std::vector<std::size_t>& row : matched.rows) kept.push_back(traces[r].collectives[row[r]]);
    traces[r].collectives = std::move(kept);
  }
}

// Where every rank's trace holds its backend's runs, a rank's communication is the time they
// covered, and a step's the part of it in that rank's window of the step: overlapping calls
// (gloo's worker threads, NCCL's streams) count once, so neither exceeds the time it is in.
void communication_from_runs(const std::vector<RankTrace>& traces, TraceSummary& summary) {
  const bool runs = std::all_of(traces.begin(), traces.end(),
                                [](const RankTrace& t) { return !t.backend_busy_us.empty(); });
  for (std::size_t r = 0; r < traces.size(); ++r)
    summary.ranks[r].communication_seconds =
        runs ? std::optional<double>(total_length(traces[r].backend_busy_us) * 1e-6) : summary.ranks[r].calls_seconds;
  if (!runs) return;
  for (StepSummary& step : summary.steps) {
    // The mean over the ranks whose traces hold the step: one whose profiler stopped before
    // it did not run it idle.
    double busy = 0;
    int holding = 0;
    for (const RankTrace& trace : traces)
      for (const StepWindow& window : trace.steps)
        if (window.number == step.number) {
          busy += overlap_length(trace.backend_busy_us, {{window.start_us, window.end_us}}) * 1e-6;
          ++holding;
        }
    step.communication_seconds = holding > 0 ? busy / holding : 0.0;
  }
}

std::string arrival_note(const ArrivalClock& clock, const RankTrace& first) {
  const std::string clock_text = clock.on_the_epoch
                                     ? std::string(
                                           "on the epoch, where torch.profiler's baseTimeNanoseconds puts "
                                           "every trace's times")
                                     : fmt::format("on the clock of the one host the ranks ran on, {}", first.host);
  return fmt::format(
      "arrival is when each rank called, {}: the waits, the last arrivals and the straggler are read from it, not "
      "from the calls' durations",
      clock_text);
}

}  // namespace

TraceSummary summarize_traces(std::vector<RankTrace> traces) {
  if (traces.empty()) throw UsageError("no trace given");
  std::sort(traces.begin(), traces.end(), [](const RankTrace& a, const RankTrace& b) { return a.rank < b.rank; });
  require_one_run(traces);
  TraceSummary summary;
  summary.world_size = traces.front().world_size;
  summary.backend = traces.front().backend;
  for (const RankTrace& trace : traces) summary.ranks.push_back(rank_summary(trace));
  const MatchedCalls matched = match_calls(traces);
  summary.notes = matched.notes;
  if (!matched.one_to_one) keep_matched_calls(traces, matched);
  const ArrivalClock clock = arrival_clock(traces);
  require_calls_to_meet(traces, clock);
  summary.calls = traces.front().collectives.size();
  std::map<int, StepSummary> steps = step_windows(traces);
  Classes classes;
  const bool by_call = std::any_of(traces.begin(), traces.end(), [](const RankTrace& t) { return t.call_times_only; });
  WaitTally waits(traces.size());
  for (std::size_t i = 0; i < summary.calls; ++i) {
    const bool timed = std::all_of(traces.begin(), traces.end(),
                                   [&](const RankTrace& t) { return t.collectives[i].timed_by_backend; });
    const bool by_issue = clock.comparable || by_call || !timed;
    const CallTiming timing = call_timing(traces, i, by_issue, clock);
    waits.add(timing, by_issue, traces.front().collectives[i].step);
    const TracedCollective& call = traces.front().collectives[i];
    if (const auto step = steps.find(call.step); step != steps.end()) add_to_step(step->second, call, timing, timed);
    add_to_class(summary, classes, traces, i, timing, timed);
  }
  waits.fill(summary.ranks);
  finish_classes(summary, classes);
  for (auto& [number, step] : steps) {
    step.wait_seconds = waits.step_wait_seconds(number);
    summary.steps.push_back(step);
  }
  communication_from_runs(traces, summary);
  if (clock.comparable && !by_call && traces.size() > 1) summary.notes.push_back(arrival_note(clock, traces.front()));
  judge_straggler(summary, waits.spread_seconds());
  return summary;
}

std::optional<double> per_step_over_ranks(const TraceSummary& summary, std::optional<double> RankTraceSummary::*figure) {
  if (summary.steps.empty() || summary.ranks.empty()) return std::nullopt;
  double total = 0;
  for (const RankTraceSummary& rank : summary.ranks) {
    if (!(rank.*figure)) return std::nullopt;
    const int steps = rank.steps > 0 ? rank.steps : static_cast<int>(summary.steps.size());
    total += *(rank.*figure) / steps;
  }
  return total / static_cast<double>(summary.ranks.size());
}

std::vector<int> ranks_short_of_steps(const TraceSummary& summary) {
  std::vector<int> short_ranks;
  for (const RankTraceSummary& rank : summary.ranks)
    if (rank.steps > 0 && rank.steps < static_cast<int>(summary.steps.size())) short_ranks.push_back(rank.rank);
  return short_ranks;
}

}  // namespace commbench
