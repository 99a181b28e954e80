// Arrival from when each rank called, where the ranks' clocks compare, and the straggler
// named by the waiting its lateness cost the others.
#include <gtest/gtest.h>

#include <algorithm>

#include "commbench/replay/trace_summary.hpp"

namespace commbench {
namespace {

// A DDP-like step of rank `rank` of 4: bucket allreduces issued 1 ms apart from
// `issued_from_us`, each run by gloo's one thread from its issue, or the end of the bucket
// before, to `ends_us[k]` (every rank's run of a bucket ends together).
RankTrace ddp_rank(int rank, double issued_from_us, const std::vector<double>& ends_us, const std::string& host) {
  RankTrace trace;
  trace.path = "rank" + std::to_string(rank) + ".json";
  trace.rank = rank;
  trace.world_size = 4;
  trace.host = host;
  trace.steps = {{1, 0, 300'000}};
  for (std::size_t k = 0; k < ends_us.size(); ++k) {
    TracedCollective c;
    c.op = "allreduce";
    c.collective = Collective::allreduce;
    c.dtype = "float32";
    c.bytes = 4'000'000;
    c.group_ranks = 4;
    c.issued_us = issued_from_us + 1'000 * static_cast<double>(k);
    c.start_us = k == 0 ? c.issued_us : std::max(c.issued_us, ends_us[k - 1]);
    c.end_us = ends_us[k];
    c.step = 1;
    c.timed_by_backend = true;
    trace.collectives.push_back(c);
  }
  return trace;
}

// Rank 2 issues every bucket 45 ms after the others. The first bucket ends 2 ms after rank
// 2's arrives; the buckets after it queue behind it on every rank and end 20 ms apart, so
// from the second on every rank's run is as long: only the first bucket's duration shows
// who came late.
std::vector<RankTrace> sleep_before_backward(const std::string& host_of_rank3) {
  std::vector<double> ends;
  for (int k = 0; k < 8; ++k) ends.push_back(47'000 + 20'000 * k);
  std::vector<RankTrace> traces;
  for (int rank = 0; rank < 4; ++rank)
    traces.push_back(ddp_rank(rank, rank == 2 ? 45'000 : 1'000 * rank, ends, rank == 3 ? host_of_rank3 : "node1"));
  return traces;
}

TEST(StragglerArrival, OnOneHostEveryBucketIssuedLateNamesTheRankWithTheWaitingItCost) {
  const TraceSummary summary = summarize_traces(sleep_before_backward("node1"));
  ASSERT_TRUE(summary.straggler.has_value());
  EXPECT_EQ(*summary.straggler, 2);
  const RankTraceSummary& late = summary.ranks[2];
  EXPECT_EQ(late.last_arrivals, 8u);
  EXPECT_DOUBLE_EQ(*late.lateness_seconds, 44e-3);  // after the others' median (1 ms)
  // Each other rank waits from its first issue to rank 2's last: the buckets' waits overlap
  // and are counted once: 52 - 0 ms, 52 - 1 ms, 52 - 3 ms.
  EXPECT_NEAR(summary.ranks[0].wait_seconds, 52e-3, 1e-9);
  EXPECT_NEAR(late.caused_wait_seconds, 52e-3 + 51e-3 + 49e-3, 1e-9);
  EXPECT_DOUBLE_EQ(late.wait_seconds, 0);
  EXPECT_EQ(summary.verdict.rfind("straggler: rank 2 (node1) cost the others 152 ms of waiting, 100 % of all the "
                                  "waiting; it arrives last at 8 of 8 calls, 44 ms after the others' median",
                                  0),
            0u)
      << summary.verdict;
  ASSERT_EQ(summary.notes.size(), 1u);
  EXPECT_EQ(summary.notes[0].rfind(
                "arrival is when each rank called, on the clock of the one host the ranks ran on, node1:", 0),
            0u);
}

TEST(StragglerArrival, OnHostsWithoutACommonClockDurationsSayOnlyTheFirstBucket) {
  // The same job with rank 3 on another host: the durations show rank 2 last at the first
  // bucket only, which names no straggler.
  const TraceSummary summary = summarize_traces(sleep_before_backward("node2"));
  EXPECT_FALSE(summary.straggler.has_value());
  EXPECT_EQ(summary.ranks[2].last_arrivals, 1u);
  EXPECT_TRUE(summary.notes.empty());
  EXPECT_EQ(summary.verdict.rfind("no straggler named: rank 2 (node1) caused the most waiting", 0), 0u)
      << summary.verdict;
}

TEST(StragglerArrival, TheProfilersEpochPutsRanksOfManyHostsOnOneClock) {
  // Each rank on a host of its own, its times from its own zero: baseTimeNanoseconds puts
  // them on the epoch, where rank 2 is the late one.
  std::vector<RankTrace> traces = sleep_before_backward("node3");
  for (RankTrace& trace : traces) {
    trace.host = "node" + std::to_string(trace.rank);
    const double zero_us = 1e6 * trace.rank;
    trace.epoch_offset_us = 1.7e15 + zero_us;
    for (TracedCollective& c : trace.collectives) {
      c.issued_us -= zero_us;
      c.start_us -= zero_us;
      c.end_us -= zero_us;
    }
  }
  const TraceSummary summary = summarize_traces(traces);
  ASSERT_TRUE(summary.straggler.has_value());
  EXPECT_EQ(*summary.straggler, 2);
  EXPECT_EQ(summary.ranks[2].last_arrivals, 8u);
  EXPECT_NEAR(summary.ranks[2].caused_wait_seconds, 152e-3, 1e-6);
  ASSERT_EQ(summary.notes.size(), 1u);
  EXPECT_NE(summary.notes[0].find("baseTimeNanoseconds"), std::string::npos);
}

TEST(StragglerArrival, ARankALittleLateAtTwoCallsOfALongStepIsNoFinding) {
  // Rank 1 issues both calls 3 ms late in a 300 ms step: last at every call, but two calls
  // say that of one of 4 ranks by chance 25 % of the time, and 3 ms is no tenth of a step.
  std::vector<RankTrace> traces;
  for (int rank = 0; rank < 4; ++rank)
    traces.push_back(ddp_rank(rank, rank == 1 ? 3'000 : 100.0 * rank, {10'000, 20'000}, "node1"));
  const TraceSummary summary = summarize_traces(traces);
  EXPECT_FALSE(summary.straggler.has_value());
  EXPECT_EQ(summary.ranks[1].last_arrivals, 2u);
  EXPECT_EQ(summary.verdict,
            "no straggler named: rank 1 (node1) caused the most waiting, 11.5 ms (100 % of it), but by chance alone "
            "one of 4 ranks is last at 2 of 2 calls 25 % of the time, and its lateness, 2.8 ms after the others' "
            "median, is under a tenth of a step (300 ms) (2 calls matched)");
}

TEST(StragglerArrival, CallsMeetOnTheEpochWhereEachTraceCountsFromItsOwnZero) {
  // Rank 1's profiler counts from a zero 90 s after rank 0's: its raw times are 90 s
  // behind, on the epoch they are the same calls.
  std::vector<RankTrace> traces = sleep_before_backward("node1");
  for (RankTrace& trace : traces) {
    trace.epoch_offset_us = trace.rank == 1 ? 90e6 : 0.0;
    if (trace.rank == 1)
      for (TracedCollective& c : trace.collectives) {
        c.issued_us -= 90e6;
        c.start_us -= 90e6;
        c.end_us -= 90e6;
      }
  }
  const TraceSummary summary = summarize_traces(traces);
  EXPECT_EQ(summary.straggler, 2);
  EXPECT_NEAR(summary.ranks[2].caused_wait_seconds, 152e-3, 1e-6);
}

}  // namespace
}  // namespace commbench
