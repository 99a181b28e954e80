// Ranks whose windows do not line up matched on the calls they share: profilers started at
// different steps, and calls issued from two threads in a different order on each rank.
#include "call_matching.hpp"

#include <gtest/gtest.h>

#include "commbench/replay/trace_summary.hpp"
#include "usage_error.hpp"

namespace commbench {
namespace {

struct Call {
  const char* op;
  std::uint64_t bytes;
  std::int64_t thread;
};

// The calls 1 ms apart from `from_us`, on the ranks' common clock.
RankTrace rank_of(int rank, const std::vector<Call>& calls, double from_us = 0) {
  RankTrace trace;
  trace.path = "rank" + std::to_string(rank) + ".json";
  trace.rank = rank;
  trace.world_size = 2;
  double t = from_us;
  for (const Call& call : calls) {
    TracedCollective c;
    c.op = call.op;
    c.bytes = call.bytes;
    c.thread = call.thread;
    c.issued_us = c.start_us = t;
    c.end_us = t + 100;
    c.timed_by_backend = true;
    t += 1'000;
    trace.collectives.push_back(c);
  }
  return trace;
}

// One step: two allreduces and an allgather, on thread `thread`.
std::vector<Call> steps(int count, std::int64_t thread) {
  std::vector<Call> calls;
  for (int s = 0; s < count; ++s)
    for (const Call& call : {Call{"allreduce", 4'000'000, thread}, Call{"allgather", 1'000'000, thread},
                             Call{"allreduce", 8'000'000, thread}})
      calls.push_back(call);
  return calls;
}

TEST(CallMatching, TracesThatLineUpAreMatchedOneToOne) {
  const MatchedCalls matched = match_calls({rank_of(0, steps(2, 1)), rank_of(1, steps(2, 7))});
  EXPECT_TRUE(matched.one_to_one);
  ASSERT_EQ(matched.rows.size(), 6u);
  EXPECT_EQ(matched.rows[4], (std::vector<std::size_t>{4, 4}));
  EXPECT_TRUE(matched.notes.empty());
}

TEST(CallMatching, AProfilerStartedAStepLaterIsMatchedOnTheCommonSteps) {
  // Rank 1's profiler started one step later and stopped with rank 0's: its trace holds
  // rank 0's last two steps, which its first two steps match as well by their calls alone.
  const MatchedCalls matched = match_calls({rank_of(0, steps(3, 1)), rank_of(1, steps(2, 1), 3'000)});
  EXPECT_FALSE(matched.one_to_one);
  ASSERT_EQ(matched.rows.size(), 6u);
  for (std::size_t k = 0; k < 6; ++k) EXPECT_EQ(matched.rows[k], (std::vector<std::size_t>{k + 3, k}));
  ASSERT_EQ(matched.notes.size(), 2u);
  EXPECT_EQ(matched.notes[1], "matched 6 of 9 calls of rank 0; 3 outside the common window");
}

TEST(CallMatching, CallsOfTwoThreadsAreMatchedThreadByThread) {
  // Each rank calls its allreduces on one thread and its all-to-alls (of sizes its own) on
  // another; the two threads' calls interleave differently on each rank.
  const std::vector<Call> first{{"allreduce", 100, 11},
                                {"alltoall", 64, 12},
                                {"allreduce", 200, 11},
                                {"alltoall", 96, 12},
                                {"allreduce", 300, 11}};
  const std::vector<Call> second{{"alltoall", 80, 22},
                                 {"alltoall", 32, 22},
                                 {"allreduce", 100, 21},
                                 {"allreduce", 200, 21},
                                 {"allreduce", 300, 21}};
  const MatchedCalls matched = match_calls({rank_of(0, first), rank_of(1, second)});
  ASSERT_EQ(matched.rows.size(), 5u);
  EXPECT_EQ(matched.rows[0], (std::vector<std::size_t>{0, 2}));
  EXPECT_EQ(matched.rows[1], (std::vector<std::size_t>{1, 0}));
  EXPECT_EQ(matched.rows[2], (std::vector<std::size_t>{2, 3}));
  EXPECT_EQ(matched.rows[3], (std::vector<std::size_t>{3, 1}));
  EXPECT_EQ(matched.rows[4], (std::vector<std::size_t>{4, 4}));
  ASSERT_EQ(matched.notes.size(), 1u);  // every call matched
}

TEST(CallMatching, TheSummaryCountsTheSharedCallsAndSaysWhatWasLeftOut) {
  const TraceSummary summary = summarize_traces({rank_of(0, steps(3, 1)), rank_of(1, steps(2, 1), 3'000)});
  EXPECT_EQ(summary.calls, 6u);
  EXPECT_EQ(summary.ranks[0].collectives, 9u);
  EXPECT_EQ(summary.ranks[1].collectives, 6u);
  ASSERT_EQ(summary.classes.size(), 3u);
  for (const TracedClass& c : summary.classes) EXPECT_EQ(c.calls, 2u);
  ASSERT_GE(summary.notes.size(), 2u);
  EXPECT_EQ(summary.notes[1], "matched 6 of 9 calls of rank 0; 3 outside the common window");
}

TEST(CallMatching, PyTorchsSequenceNumbersNameTheSameCallWhateverTheTimes) {
  // Three like allreduces on rank 0 (numbers 1 to 3), the last two on rank 1 (2 and 3),
  // issued when rank 0 issued its first two: by times and sizes rank 1's calls would be
  // rank 0's first two; by their numbers they are its last two.
  RankTrace zero = rank_of(0, {{"allreduce", 1'000, 7}, {"allreduce", 1'000, 7}, {"allreduce", 1'000, 7}});
  RankTrace one = rank_of(1, {{"allreduce", 1'000, 7}, {"allreduce", 1'000, 7}});
  for (std::size_t i = 0; i < zero.collectives.size(); ++i) {
    zero.collectives[i].sequence = static_cast<std::int64_t>(i) + 1;
    zero.collectives[i].process_group = "0";
  }
  for (std::size_t i = 0; i < one.collectives.size(); ++i) {
    one.collectives[i].sequence = static_cast<std::int64_t>(i) + 2;
    one.collectives[i].process_group = "0";
  }
  const MatchedCalls matched = match_calls({zero, one});
  EXPECT_FALSE(matched.one_to_one);
  ASSERT_EQ(matched.rows.size(), 2u);
  EXPECT_EQ(matched.rows[0], (std::vector<std::size_t>{1, 0}));
  EXPECT_EQ(matched.rows[1], (std::vector<std::size_t>{2, 1}));
  ASSERT_FALSE(matched.notes.empty());
  EXPECT_NE(matched.notes[0].find("sequence numbers"), std::string::npos);
  // Without the numbers the same calls are matched by their order and times.
  for (TracedCollective& c : zero.collectives) c.sequence.reset();
  EXPECT_EQ(match_calls({zero, one}).rows[0], (std::vector<std::size_t>{0, 0}));
}

}  // namespace
}  // namespace commbench
