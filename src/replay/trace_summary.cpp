#include "commbench/replay/trace_summary.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "commbench/core/error.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/core/statistics.hpp"
#include "time_intervals.hpp"

namespace commbench {

namespace {

// A call's time: what its runs covered (several kernels of one call are busy for their union).
double duration_of(const TracedCollective& c) {
  if (c.timed_by_backend && c.run_us > 0) return c.run_us * 1e-6;
  return std::max(0.0, c.end_us - c.start_us) * 1e-6;
}

// A collective ends on no rank before every rank has called it. Ranks whose matched calls
// are minutes apart (more than any clock offset or straggler) are of different runs.
void require_calls_to_meet(const std::vector<RankTrace>& traces) {
  constexpr double kApartUs = 60e6;
  for (std::size_t i = 0; i < traces.front().collectives.size(); ++i) {
    const RankTrace* ended = nullptr;
    const RankTrace* called = nullptr;
    for (const RankTrace& trace : traces) {
      const TracedCollective& call = trace.collectives[i];
      // A call's end without the backend's run is when it was queued, not when it ended.
      if (call.timed_by_backend && (!ended || call.end_us < ended->collectives[i].end_us)) ended = &trace;
      if (!called || call.issued_us > called->collectives[i].issued_us) called = &trace;
    }
    if (!ended) continue;
    const double apart_us = called->collectives[i].issued_us - ended->collectives[i].end_us;
    if (apart_us > kApartUs)
      throw UsageError(fmt::format(
          "call {} ({}) ended in {} {:.0f} s before {} called it: traces of different runs (or of hosts whose "
          "clocks are that far apart)",
          i + 1, ended->collectives[i].op, ended->path, apart_us * 1e-6, called->path));
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
  for (const RankTrace& trace : traces) {
    if (trace.collectives.size() != first.collectives.size())
      throw UsageError(
          fmt::format("{} holds {} collective calls, {} holds {}: the traces do not line up (different "
                      "runs or steps)",
                      trace.path, trace.collectives.size(), first.path, first.collectives.size()));
    for (std::size_t i = 0; i < trace.collectives.size(); ++i)
      if (trace.collectives[i].op != first.collectives[i].op)
        throw UsageError(fmt::format("call {} is {} in {} and {} in {}: the traces do not line up", i + 1,
                                     trace.collectives[i].op, trace.path, first.collectives[i].op, first.path));
  }
  require_calls_to_meet(traces);
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

// Whether a rank last at `most` of `calls` calls among `ranks` is more than arrival noise:
// last at more than twice its share of the calls, at two calls or more. Of two ranks one is
// always last, so there it must be last at 90 % of 10 calls or more (by chance alone, one
// of two ranks is that often last about 2 % of the time).
bool names_a_straggler(std::uint64_t most, std::uint64_t calls, std::size_t ranks) {
  if (ranks < 2 || most < 2) return false;
  if (ranks == 2) return calls >= 10 && most * 10 >= calls * 9;
  return most * ranks > 2 * calls;
}

std::string verdict_of(const TraceSummary& summary) {
  // A rank not read may be the one the others waited for.
  if (summary.ranks.size() < static_cast<std::size_t>(summary.world_size))
    return fmt::format(
        "no straggler can be named: {} of the job's {} ranks {} read, and the rank the others waited for may be "
        "among those not read (give every rank's trace)",
        summary.ranks.size(), summary.world_size, summary.ranks.size() == 1 ? "was" : "were");
  if (summary.ranks.size() == 1) return "no straggler: one rank, with no other to wait for";
  if (!summary.straggler && summary.ranks.size() == 2)
    return fmt::format(
        "no straggler named: of two ranks one is always last, and it takes one last at 90 % of 10 calls or more "
        "({} matched)",
        count_text(summary.calls, "call"));
  if (!summary.straggler)
    return fmt::format("no straggler: the last arrival is spread over the ranks ({} matched)",
                       count_text(summary.calls, "call"));
  const RankTraceSummary& rank = *std::find_if(summary.ranks.begin(), summary.ranks.end(),
                                               [&](const RankTraceSummary& r) { return r.rank == *summary.straggler; });
  return fmt::format("straggler: rank {}{} arrives last at {} of {} calls, {} ms after the others' median", rank.rank,
                     rank.host.empty() ? "" : " (" + rank.host + ")", rank.last_arrivals, summary.calls,
                     significant_text(rank.lateness_seconds.value_or(0) * 1e3, 3));
}

// A class's NCCL choice over its calls: the first call's, or "mixed" once another differs.
void merge_choice(std::string& held, const std::string& seen, bool first) {
  if (first)
    held = seen;
  else if (held != seen)
    held = "mixed";
}

// One call matched across the ranks: how long each rank took and waited, who came last.
struct CallTiming {
  std::vector<double> durations;  // seconds
  std::vector<double> waits;      // seconds each rank waited for the last one
  std::size_t last = 0;           // the rank that arrived last
  double lateness = 0;            // seconds it came after the others' median
};

// With the backend's own times, every rank's call ends together: the one that arrived last
// ran shortest, and the others' extra time is waiting. Without them (an async call's range
// is its queueing), arrival is when each rank called, on the common clock.
CallTiming call_timing(const std::vector<RankTrace>& traces, std::size_t i, bool by_call) {
  CallTiming timing;
  std::vector<double> arrivals;
  for (const RankTrace& trace : traces) {
    const TracedCollective& call = trace.collectives[i];
    timing.durations.push_back(duration_of(call));
    arrivals.push_back(by_call ? call.issued_us * 1e-6 : -timing.durations.back());
  }
  timing.last = static_cast<std::size_t>(std::max_element(arrivals.begin(), arrivals.end()) - arrivals.begin());
  std::vector<double> others;
  for (std::size_t r = 0; r < arrivals.size(); ++r) {
    timing.waits.push_back(arrivals[timing.last] - arrivals[r]);
    if (r != timing.last) others.push_back(arrivals[r]);
  }
  if (!others.empty()) timing.lateness = arrivals[timing.last] - median_of(others);
  return timing;
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
  rank.unclaimed_seconds = trace.unclaimed_seconds;
  if (!trace.steps.empty()) {
    double steps = 0;
    for (const StepWindow& step : trace.steps) steps += (step.end_us - step.start_us) * 1e-6;
    rank.step_seconds = steps;
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
// backend timed it, and their mean waits.
void add_to_step(StepSummary& step, const TracedCollective& call, const CallTiming& timing, bool timed) {
  const double ranks = static_cast<double>(timing.durations.size());
  step.calls += 1;
  step.bytes += call.bytes;
  step.bytes_known = step.bytes_known && call.bytes_known;
  for (std::size_t r = 0; r < timing.durations.size(); ++r) {
    if (timed) step.communication_seconds = step.communication_seconds.value_or(0) + timing.durations[r] / ranks;
    step.wait_seconds += timing.waits[r] / ranks;
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
    double busy = 0;
    for (const RankTrace& trace : traces)
      for (const StepWindow& window : trace.steps)
        if (window.number == step.number)
          busy += overlap_length(trace.backend_busy_us, {{window.start_us, window.end_us}}) * 1e-6;
    step.communication_seconds = busy / static_cast<double>(traces.size());
  }
}

}  // namespace

TraceSummary summarize_traces(std::vector<RankTrace> traces) {
  if (traces.empty()) throw UsageError("no trace given");
  std::sort(traces.begin(), traces.end(), [](const RankTrace& a, const RankTrace& b) { return a.rank < b.rank; });
  require_one_run(traces);
  TraceSummary summary;
  summary.world_size = traces.front().world_size;
  summary.backend = traces.front().backend;
  summary.calls = traces.front().collectives.size();
  for (const RankTrace& trace : traces) summary.ranks.push_back(rank_summary(trace));
  std::map<int, StepSummary> steps = step_windows(traces);
  std::map<ClassKey, std::size_t> class_index;
  std::vector<std::optional<Collective>> class_collective;
  std::vector<double> lateness_sum(traces.size(), 0.0);
  const bool by_call = std::any_of(traces.begin(), traces.end(), [](const RankTrace& t) { return t.call_times_only; });
  for (std::size_t i = 0; i < summary.calls; ++i) {
    const bool timed = std::all_of(traces.begin(), traces.end(),
                                   [&](const RankTrace& t) { return t.collectives[i].timed_by_backend; });
    const CallTiming timing = call_timing(traces, i, by_call || !timed);
    for (std::size_t r = 0; r < traces.size(); ++r) {
      RankTraceSummary& rank = summary.ranks[r];
      rank.wait_seconds += timing.waits[r];
      if (timed) rank.calls_seconds = rank.calls_seconds.value_or(0) + timing.durations[r];
    }
    // Arrivals at one time (a tie) name no rank last.
    if (traces.size() > 1 && timing.lateness > 0) {
      ++summary.ranks[timing.last].last_arrivals;
      lateness_sum[timing.last] += timing.lateness;
    }
    const TracedCollective& call = traces.front().collectives[i];
    if (const auto step = steps.find(call.step); step != steps.end()) add_to_step(step->second, call, timing, timed);
    const ClassKey key{call.op, call.dtype, call.bytes, call.bytes_known, call.group_ranks};
    auto [at, added] = class_index.emplace(key, summary.classes.size());
    if (added) {
      TracedClass c;
      c.op = call.op;
      c.dtype = call.dtype;
      c.bytes = call.bytes;
      c.bytes_known = call.bytes_known;
      c.group_ranks = call.group_ranks;
      c.ranks = static_cast<int>(traces.size());
      summary.classes.push_back(c);
      class_collective.push_back(call.collective);
    }
    TracedClass& c = summary.classes[at->second];
    for (const RankTrace& trace : traces) {
      merge_choice(c.nccl_algo, trace.collectives[i].nccl_algo, c.calls == 0 && &trace == &traces.front());
      merge_choice(c.nccl_proto, trace.collectives[i].nccl_proto, c.calls == 0 && &trace == &traces.front());
    }
    ++c.calls;
    if (timed) {
      c.seconds = c.seconds.value_or(0) + timing.durations[timing.last];
      ++c.timed_calls;
    }
    for (const double wait : timing.waits) c.wait_seconds += wait / static_cast<double>(traces.size());
  }
  for (std::size_t k = 0; k < summary.classes.size(); ++k) {
    TracedClass& c = summary.classes[k];
    if (c.seconds) *c.seconds /= static_cast<double>(c.timed_calls);
    c.wait_seconds /= static_cast<double>(c.calls);
    add_bandwidth(c, class_collective[k]);
  }
  for (const auto& [number, step] : steps) summary.steps.push_back(step);
  communication_from_runs(traces, summary);
  std::uint64_t most = 0;
  for (std::size_t r = 0; r < traces.size(); ++r) {
    RankTraceSummary& rank = summary.ranks[r];
    if (rank.last_arrivals > 0) rank.lateness_seconds = lateness_sum[r] / static_cast<double>(rank.last_arrivals);
    if (rank.last_arrivals > most) {
      most = rank.last_arrivals;
      summary.straggler = rank.rank;
    }
  }
  if (!names_a_straggler(most, summary.calls, traces.size()) ||
      traces.size() < static_cast<std::size_t>(summary.world_size))
    summary.straggler.reset();
  summary.verdict = verdict_of(summary);
  return summary;
}

}  // namespace commbench
