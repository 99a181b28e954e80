// The ranks' traces of one job held together: each collective call matched across ranks
// (by its place in the call order, or on the calls the ranks share where their windows do
// not line up: call_matching.hpp), what it moved and how fast once the last rank arrived,
// how long the others waited for that rank, and the rank whose lateness cost them the most
// waiting. Arrival is when each rank called, where the ranks' clocks compare (one host, or
// torch.profiler's epoch on every trace); elsewhere it is read from durations: a rank that
// comes late finds the others waiting, so its own call is the shortest (call_arrival.hpp).
// A call's time is the backend's run of it (an NCCL kernel, a gloo range): a call without
// one (TracedCollective::timed_by_backend) has no time, since its own range is when it was
// queued, and its arrival is when each rank called it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "commbench/replay/communication_trace.hpp"

namespace commbench {

// Calls of one operation, type, size and group, every rank's together.
struct TracedClass {
  std::string op;
  std::string dtype;
  std::uint64_t bytes = 0;
  bool bytes_known = true;        // false: the traces record no size for these calls
  int group_ranks = 0;            // 0 unknown
  int ranks = 0;                  // ranks whose traces hold them
  std::uint64_t calls = 0;        // per rank
  std::uint64_t timed_calls = 0;  // of those, the calls the backend timed on every rank
  // Mean per timed call: the shortest rank's duration (from the last arrival to the end);
  // none when the backend timed none of the calls.
  std::optional<double> seconds;
  // Mean per call and rank: how much longer than that the rank's call took, or for a call
  // the backend did not time, how much earlier than the last rank it called.
  double wait_seconds = 0;
  std::optional<double> algbw_gbps, busbw_gbps;
  // The NCCL kernels' algorithm and protocol (TracedCollective), "mixed" when they differ.
  std::string nccl_algo, nccl_proto;
};

struct RankTraceSummary {
  int rank = 0;
  std::string host;
  std::string path;
  std::uint64_t collectives = 0;
  // The time its backend ran (the union of its NCCL kernels, or of gloo's ranges), whatever
  // call each run was of; without the runs, its timed calls' durations summed. None when
  // nothing was timed.
  std::optional<double> communication_seconds;
  std::optional<double> calls_seconds;  // its timed calls' own times summed; none when none was timed
  std::uint64_t unclaimed_runs = 0;     // runs of the backend no call claimed, and their time
  double unclaimed_seconds = 0;
  // Waiting for the last rank to arrive: part of its timed calls' time, and where arrival is
  // when each rank called, from when it called to when the last rank called (time when
  // several of its calls waited at once counted once).
  double wait_seconds = 0;
  std::optional<double> step_seconds;      // its profiler steps, summed; none without steps
  // Its profiler steps: fewer than the traces' when its trace lost some (a profiler stopped
  // early on that rank), and its figures then cover only those.
  int steps = 0;
  std::uint64_t last_arrivals = 0;         // calls it was the last to arrive at
  std::optional<double> lateness_seconds;  // mean, over those, of how much later than the others' median
  double caused_wait_seconds = 0;          // the others' waiting at those calls, each other rank's added
  std::optional<double> exposed_seconds;   // NCCL kernels not overlapped by compute kernels; none without
};

// One profiler step (ProfilerStep#N) across the ranks: what the job's calls in it moved
// and took. Steps tell a steady job from one whose communication varies step to step.
struct StepSummary {
  int number = 0;                               // N of ProfilerStep#N
  std::uint64_t calls = 0;                      // per rank
  std::uint64_t bytes = 0;                      // per rank, nccl-tests' sizes summed
  bool bytes_known = true;                      // false when a call in it has no size in the traces
  double step_seconds = 0;                      // the longest rank's window
  // Mean over the ranks of the time their backend ran in the step's window; without the
  // runs, of their timed calls' durations.
  std::optional<double> communication_seconds;
  double wait_seconds = 0;                      // of that, the mean waiting for the last rank to arrive
};

struct TraceSummary {
  std::string source;  // what was read, when not one trace per rank: "DeepSpeed comms log (...)"
  int world_size = 0;
  std::string backend;
  std::uint64_t calls = 0;  // matched per rank
  std::vector<TracedClass> classes;
  std::vector<RankTraceSummary> ranks;
  std::vector<StepSummary> steps;  // every step of the traces, in order; none without steps
  std::optional<int> straggler;    // the rank whose lateness cost the others most waiting (straggler_verdict.hpp)
  std::string verdict;
  std::vector<std::string> notes;  // how the calls were matched and arrival read, where that needs saying
};

// UsageError (exit 2) when the traces are not of one run: different world sizes, a rank
// twice, a trace that shares no call with the others, or matched calls minutes apart.
TraceSummary summarize_traces(std::vector<RankTrace> traces);

// A rank's figure per step of its own, the mean over the ranks: a rank whose trace holds
// 2 of the 3 steps has its time divided by 2, not 3 (one holding no step, by 3). None when
// a rank has no such figure or the traces hold no step.
std::optional<double> per_step_over_ranks(const TraceSummary& summary, std::optional<double> RankTraceSummary::*figure);
// The ranks whose traces hold some of the steps but fewer than the traces together do (a
// trace with no step at all is taken over every step).
std::vector<int> ranks_short_of_steps(const TraceSummary& summary);

}  // namespace commbench
