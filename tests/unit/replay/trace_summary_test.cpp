// The ranks' traces held together: calls matched by their place, the bandwidth once the
// last rank arrived, the rank the others waited for, and traces that are not of one run.
#include <gtest/gtest.h>

#include "commbench/replay/trace_summary.hpp"
#include "usage_error.hpp"

namespace commbench {
namespace {

using testing::usage_error_of;

// Rank `rank` of 4 with one 1 MB allreduce per duration (µs), each timed by its kernel.
RankTrace rank_trace(int rank, const std::vector<double>& durations_us) {
  RankTrace trace;
  trace.path = "rank" + std::to_string(rank) + ".json";
  trace.rank = rank;
  trace.world_size = 4;
  double t = 0;
  for (const double d : durations_us) {
    TracedCollective c;
    c.op = "allreduce";
    c.collective = Collective::allreduce;
    c.dtype = "float32";
    c.bytes = 1'000'000;
    c.group_ranks = 4;
    c.issued_us = t;
    c.start_us = t;
    c.end_us = t + d;
    c.timed_by_backend = true;
    t += 10'000;
    trace.collectives.push_back(c);
  }
  return trace;
}

TEST(TraceSummary, TheShortestCallIsTheLastArrivalAndSetsTheBandwidth) {
  // Rank 2 comes 4 ms late to every call: the others' calls last 5 ms, its own 1 ms.
  std::vector<RankTrace> traces;
  for (int rank = 0; rank < 4; ++rank)
    traces.push_back(rank_trace(rank, std::vector<double>(5, rank == 2 ? 1000 : 5000)));
  const TraceSummary summary = summarize_traces(traces);
  ASSERT_EQ(summary.classes.size(), 1u);
  const TracedClass& c = summary.classes[0];
  EXPECT_EQ(c.calls, 5u);
  EXPECT_DOUBLE_EQ(*c.seconds, 1e-3);
  EXPECT_DOUBLE_EQ(c.wait_seconds, 3e-3);  // 3 of 4 ranks waited 4 ms
  EXPECT_DOUBLE_EQ(*c.algbw_gbps, 1.0);
  EXPECT_DOUBLE_EQ(*c.busbw_gbps, 1.5);  // 2 (n-1)/n on 4 ranks
  ASSERT_TRUE(summary.straggler.has_value());
  EXPECT_EQ(*summary.straggler, 2);
  EXPECT_EQ(summary.ranks[2].last_arrivals, 5u);
  EXPECT_DOUBLE_EQ(*summary.ranks[2].lateness_seconds, 4e-3);
  EXPECT_DOUBLE_EQ(summary.ranks[0].wait_seconds, 5 * 4e-3);
  EXPECT_DOUBLE_EQ(summary.ranks[2].caused_wait_seconds, 3 * 5 * 4e-3);
  EXPECT_EQ(summary.verdict,
            "straggler: rank 2 cost the others 60 ms of waiting, 100 % of all the waiting; it arrives last at 5 of 5 "
            "calls, 4 ms after the others' median (the others arriving together; by chance alone one of 4 ranks is "
            "last at 5 of 5 calls 0.39 % of the time)");
}

TEST(TraceSummary, ArrivalsSpreadOverTheRanksNameNoStraggler) {
  std::vector<RankTrace> traces;
  for (int rank = 0; rank < 4; ++rank) {
    std::vector<double> durations(8, 2000);
    durations[static_cast<std::size_t>(rank)] = 1000;
    durations[static_cast<std::size_t>(rank) + 4] = 1000;
    traces.push_back(rank_trace(rank, durations));
  }
  const TraceSummary summary = summarize_traces(traces);
  EXPECT_FALSE(summary.straggler.has_value());
  EXPECT_EQ(summary.ranks[1].last_arrivals, 2u);
}

TEST(TraceSummary, EachProfilerStepSaysItsCallsBytesAndTimes) {
  // Calls 0-2 in step 7, calls 3-4 in step 8; rank 3 comes 1 ms late to every call (its
  // calls last 1 ms, the others' 2 ms). Step 9 holds no call. Rank 1's step 8 is longest.
  std::vector<RankTrace> traces;
  for (int rank = 0; rank < 4; ++rank) {
    RankTrace trace = rank_trace(rank, std::vector<double>(5, rank == 3 ? 1000 : 2000));
    for (std::size_t i = 0; i < trace.collectives.size(); ++i) trace.collectives[i].step = i < 3 ? 7 : 8;
    trace.steps = {{7, 0, 30'000}, {8, 30'000, rank == 1 ? 55'000.0 : 50'000.0}, {9, 55'000, 60'000}};
    traces.push_back(trace);
  }
  const TraceSummary summary = summarize_traces(traces);
  ASSERT_EQ(summary.steps.size(), 3u);
  EXPECT_EQ(summary.steps[0].number, 7);
  EXPECT_EQ(summary.steps[0].calls, 3u);
  EXPECT_EQ(summary.steps[0].bytes, 3'000'000u);
  EXPECT_DOUBLE_EQ(summary.steps[0].step_seconds, 0.03);
  // Per call the ranks' mean: (3 x 2 ms + 1 ms) / 4 = 1.75 ms, of which (3 x 1 ms) / 4 waiting.
  EXPECT_NEAR(*summary.steps[0].communication_seconds, 3 * 1.75e-3, 1e-12);
  EXPECT_NEAR(summary.steps[0].wait_seconds, 3 * 0.75e-3, 1e-12);
  EXPECT_EQ(summary.steps[1].calls, 2u);
  EXPECT_DOUBLE_EQ(summary.steps[1].step_seconds, 0.025);
  EXPECT_EQ(summary.steps[2].number, 9);
  EXPECT_EQ(summary.steps[2].calls, 0u);
}

TEST(TraceSummary, ARankWhoseTraceLostAStepHasItsTimeTakenPerItsOwnSteps) {
  // Three steps of one call each; rank 2's profiler stopped before the third, so its trace
  // holds two steps and two calls. Every rank leaves 1 ms a step exposed.
  std::vector<RankTrace> traces;
  for (int rank = 0; rank < 4; ++rank) {
    const std::size_t steps = rank == 2 ? 2 : 3;
    RankTrace trace = rank_trace(rank, std::vector<double>(steps, 2000));
    for (std::size_t i = 0; i < steps; ++i) {
      trace.collectives[i].step = static_cast<int>(i);
      trace.steps.push_back({static_cast<int>(i), i * 10'000.0, (i + 1) * 10'000.0});
      trace.backend_busy_us.push_back({i * 10'000.0, i * 10'000.0 + 2000});  // each call's 2 ms
    }
    trace.exposed_seconds = 1e-3 * static_cast<double>(steps);
    traces.push_back(trace);
  }
  const TraceSummary summary = summarize_traces(traces);
  ASSERT_EQ(summary.steps.size(), 3u);
  EXPECT_EQ(summary.ranks[2].steps, 2);
  EXPECT_EQ(summary.ranks[0].steps, 3);
  // 1 ms a step on every rank, not (3 x 3 ms + 2 ms) / 4 / 3 = 0.917 ms.
  EXPECT_NEAR(*per_step_over_ranks(summary, &RankTraceSummary::exposed_seconds), 1e-3, 1e-12);
  EXPECT_EQ(ranks_short_of_steps(summary), std::vector<int>{2});
  // The third step's communication is the mean over the three ranks that ran it, not 3 x 2 ms / 4.
  ASSERT_TRUE(summary.steps[2].communication_seconds.has_value());
  EXPECT_NEAR(*summary.steps[2].communication_seconds, 2e-3, 1e-12);
  EXPECT_NEAR(*per_step_over_ranks(summary, &RankTraceSummary::communication_seconds), 2e-3, 1e-12);
  traces[2].exposed_seconds.reset();
  EXPECT_FALSE(per_step_over_ranks(summarize_traces(traces), &RankTraceSummary::exposed_seconds).has_value());
}

// Two ranks, rank 1 arriving 5 ms late at every one of `calls` calls.
std::vector<RankTrace> two_ranks(std::size_t calls) {
  std::vector<RankTrace> traces;
  for (int rank = 0; rank < 2; ++rank) {
    traces.push_back(rank_trace(rank, std::vector<double>(calls, rank == 1 ? 1000 : 6000)));
    traces.back().world_size = 2;
  }
  return traces;
}

TEST(TraceSummary, OfTwoRanksOneIsAlwaysLastSoItTakesMostOfManyCalls) {
  const TraceSummary few = summarize_traces(two_ranks(3));
  EXPECT_FALSE(few.straggler.has_value());
  EXPECT_EQ(few.ranks[1].last_arrivals, 3u);
  EXPECT_EQ(few.verdict,
            "no straggler named: rank 1 caused the most waiting, 15 ms (100 % of it), but of two ranks one is always "
            "last, and it takes one last at 90 % of 10 calls or more (3 calls matched)");
  const TraceSummary many = summarize_traces(two_ranks(10));
  ASSERT_TRUE(many.straggler.has_value());
  EXPECT_EQ(*many.straggler, 1);
  EXPECT_EQ(many.verdict,
            "straggler: rank 1 cost the others 50 ms of waiting, 100 % of all the waiting; it arrives last at 10 of 10 "
            "calls, 5 ms after the others' median (by chance alone one of 2 ranks is last at 10 of 10 calls 0.2 % of "
            "the time)");
}

TEST(TraceSummary, RanksArrivingTogetherNameNoneLastAndOneRankNoStraggler) {
  std::vector<RankTrace> traces;
  for (int rank = 0; rank < 4; ++rank) traces.push_back(rank_trace(rank, std::vector<double>(3, 2000)));
  const TraceSummary tied = summarize_traces(traces);
  EXPECT_FALSE(tied.straggler.has_value());
  for (const RankTraceSummary& rank : tied.ranks) EXPECT_EQ(rank.last_arrivals, 0u);
  RankTrace alone = rank_trace(0, {2000, 2000});
  alone.world_size = 1;
  EXPECT_EQ(summarize_traces({alone}).verdict, "no straggler: one rank, with no other to wait for");
}

TEST(TraceSummary, CallsTheBackendDidNotTimeHaveNoTimeAndArriveWhenEachRankCalledThem) {
  // An NCCL job profiled without CUDA activity: each call's range is its queueing (20 us
  // on every rank), and rank 1 calls every one 3 ms after the others.
  std::vector<RankTrace> traces;
  for (int rank = 0; rank < 4; ++rank) {
    RankTrace trace = rank_trace(rank, std::vector<double>(4, 20));
    for (TracedCollective& c : trace.collectives) {
      c.timed_by_backend = false;
      c.issued_us += rank == 1 ? 3000 : 0;
      c.step = 3;
    }
    trace.steps = {{3, 0, 40'000}};
    traces.push_back(trace);
  }
  const TraceSummary summary = summarize_traces(traces);
  ASSERT_EQ(summary.classes.size(), 1u);
  const TracedClass& c = summary.classes[0];
  EXPECT_EQ(c.calls, 4u);
  EXPECT_FALSE(c.seconds.has_value());  // not 20 us: that would read 50 GB/s
  EXPECT_FALSE(c.algbw_gbps.has_value());
  EXPECT_FALSE(c.busbw_gbps.has_value());
  EXPECT_DOUBLE_EQ(c.wait_seconds, 3 * 3e-3 / 4);  // three ranks waited 3 ms for rank 1
  EXPECT_FALSE(summary.ranks[0].communication_seconds.has_value());
  ASSERT_EQ(summary.steps.size(), 1u);
  EXPECT_FALSE(summary.steps[0].communication_seconds.has_value());
  ASSERT_TRUE(summary.straggler.has_value());
  EXPECT_EQ(*summary.straggler, 1);
  EXPECT_DOUBLE_EQ(*summary.ranks[1].lateness_seconds, 3e-3);
}

TEST(TraceSummary, AClassIsTimedByTheCallsTheBackendTimedOnEveryRank) {
  // Five calls, 2 ms each on every rank; the first and last found no kernel (outside the
  // capture) and read 10 us, their queueing; rank 3 found none for the middle call either.
  // The class counts the two calls timed everywhere; each rank its own timed calls (here,
  // without the backend's runs, its communication): 3 of 2 ms, rank 3's 2.
  std::vector<RankTrace> traces;
  for (int rank = 0; rank < 4; ++rank) {
    RankTrace trace = rank_trace(rank, {10, 2000, 2000, 2000, 10});
    trace.collectives.front().timed_by_backend = false;
    trace.collectives.back().timed_by_backend = false;
    if (rank == 3) trace.collectives[2].timed_by_backend = false;
    traces.push_back(trace);
  }
  const TraceSummary summary = summarize_traces(traces);
  const TracedClass& c = summary.classes[0];
  EXPECT_EQ(c.calls, 5u);
  EXPECT_EQ(c.timed_calls, 2u);
  EXPECT_DOUBLE_EQ(*c.seconds, 2e-3);
  EXPECT_DOUBLE_EQ(*c.algbw_gbps, 0.5);
  for (const RankTraceSummary& rank : summary.ranks)
    EXPECT_DOUBLE_EQ(*rank.communication_seconds, rank.rank == 3 ? 4e-3 : 6e-3);
}

TEST(TraceSummary, TracesOfDifferentRunsAreRefused) {
  std::vector<RankTrace> two{rank_trace(0, {1, 1}), rank_trace(1, {1, 1})};
  two[1].world_size = 8;
  EXPECT_EQ(usage_error_of([&] { summarize_traces(two); }),
            "rank1.json is rank 1 of 8 ranks, rank0.json of 4: traces of different runs");
  std::vector<RankTrace> twice{rank_trace(0, {1}), rank_trace(0, {1})};
  twice[1].path = "again.json";
  EXPECT_EQ(usage_error_of([&] { summarize_traces(twice); }), "rank0.json and again.json are both rank 0");
  // Calls of other operations and sizes at every place: no call is shared.
  std::vector<RankTrace> other_ops{rank_trace(0, {1, 1}), rank_trace(1, {1, 1})};
  for (TracedCollective& c : other_ops[1].collectives) c.op = "allgather";
  EXPECT_EQ(usage_error_of([&] { summarize_traces(other_ops); }),
            "rank1.json and rank0.json share no call of one operation and size: the traces do not line up (different "
            "runs or steps)");
}

}  // namespace
}  // namespace commbench
