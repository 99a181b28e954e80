// bench-replay's top cause against a fabric: hand-made summaries held against a fabric
// whose every call costs a 10 us latency floor plus its bytes at 10 GB/s.
#include <gtest/gtest.h>

#include <string>

#include "commbench/analysis/replay_cause.hpp"

namespace commbench {
namespace {

class TenMicrosecondFabric : public CommunicationCostModel {
 public:
  double seconds(const CommunicationCostQuery& query) const override {
    return 10e-6 + static_cast<double>(query.bytes) / 10e9;
  }
  std::string basis() const override { return "10 us + bytes at 10 GB/s"; }
};

TracedClass traced(std::uint64_t bytes, std::uint64_t calls, double seconds) {
  TracedClass c;
  c.op = "allreduce";
  c.dtype = "float32";
  c.bytes = bytes;
  c.group_ranks = 4;
  c.ranks = 4;
  c.calls = calls;
  c.seconds = seconds;
  c.busbw_gbps = 1.5 * static_cast<double>(bytes) / seconds / 1e9;
  return c;
}

TraceSummary summary_of(std::vector<TracedClass> classes, double communication_seconds) {
  TraceSummary summary;
  summary.world_size = 4;
  summary.classes = std::move(classes);
  for (int r = 0; r < 4; ++r) {
    RankTraceSummary rank;
    rank.rank = r;
    rank.communication_seconds = communication_seconds;
    summary.ranks.push_back(rank);
  }
  for (const TracedClass& c : summary.classes) summary.calls += c.calls;
  return summary;
}

// The summary held against the 10 us fabric, and its top cause.
struct Judged {
  FabricComparison comparison;
  CommunicationCause cause;
};
Judged judge(const TraceSummary& summary) {
  const TenMicrosecondFabric fabric;
  Judged judged{judge_against_fabric(summary, fabric, 1), {}};
  judged.cause = top_cause(summary, judged.comparison, fabric, 1);
  return judged;
}

TEST(ReplayCause, ASlowJobOnAFastFabricIsTheShortfall) {
  // 10 calls of 100 MB: 10.01 ms each on the fabric, 40 ms in the job.
  const TraceSummary summary = summary_of({traced(100'000'000, 10, 0.040)}, 0.4);
  const Judged judged = judge(summary);
  const CommunicationCause& cause = judged.cause;
  EXPECT_EQ(cause.name, "fabric shortfall");
  EXPECT_NEAR(cause.seconds, 10 * (0.040 - 0.01001), 1e-9);
  EXPECT_EQ(cause.text.rfind("the job's collectives reach 25% of the fabric's busbw: 300 ms per rank more", 0), 0u)
      << cause.text;
}

TEST(ReplayCause, ThousandsOfTinyCallsAreTheLatencyFloor) {
  // 5000 calls of 1 KB at the fabric's own speed (10.1 us), and 2 large ones a bit slower:
  // the tiny calls' latency (50 ms) outweighs the large ones' shortfall (2 x 1 ms).
  const TraceSummary summary =
      summary_of({traced(1000, 5000, 10.1e-6), traced(100'000'000, 2, 0.011)}, 5000 * 10.1e-6 + 2 * 0.011);
  const Judged judged = judge(summary);
  const CommunicationCause& cause = judged.cause;
  EXPECT_EQ(cause.name, "small collectives");
  EXPECT_NEAR(cause.seconds, 5000 * (10e-6 + 1 / 10e9), 1e-12);  // the floor: a 1-byte call
  EXPECT_EQ(cause.text.rfind("too many small collectives: 5000 calls per rank run at the fabric's latency floor, "
                             "50 ms per rank in latency alone",
                             0),
            0u)
      << cause.text;
}

TEST(ReplayCause, AStragglerWhoseWaitOutweighsTheRestIsNamed) {
  TraceSummary summary = summary_of({traced(100'000'000, 2, 0.0105)}, 0.2);
  summary.straggler = 2;
  summary.ranks[2].host = "node7";
  summary.ranks[2].last_arrivals = 2;
  summary.ranks[2].lateness_seconds = 0.05;
  summary.ranks[2].caused_wait_seconds = 0.1 * static_cast<double>(summary.ranks.size() - 1);
  const Judged judged = judge(summary);
  const CommunicationCause& cause = judged.cause;
  EXPECT_EQ(cause.name, "straggler");
  EXPECT_NEAR(cause.seconds, 0.1, 1e-12);
  EXPECT_EQ(cause.text.rfind("one straggling rank: rank 2 (node7) arrives last at 2 of 2 calls; each of the others "
                             "waits 100 ms in all for it",
                             0),
            0u)
      << cause.text;
}

TEST(ReplayCause, AJobNearTheFabricHasNoCause) {
  // Large calls within 5 % of the fabric, nobody late.
  const TraceSummary summary = summary_of({traced(100'000'000, 10, 0.0105)}, 0.105);
  const Judged judged = judge(summary);
  const CommunicationCause& cause = judged.cause;
  EXPECT_EQ(cause.name, "");
  EXPECT_EQ(cause.text.rfind("no cause stands out", 0), 0u) << cause.text;
  EXPECT_EQ(judged.comparison.cause, cause.text);
}

TEST(ReplayCause, ClassesTheTracesDidNotTimeGetTheFabricsFigureAndNoRatio) {
  // 10 calls of 100 MB with no time of their own (an NCCL job profiled without CUDA): the
  // fabric's busbw at that size is 1.5 x 100 MB / 10.01 ms; nothing to divide it by.
  TracedClass untimed = traced(100'000'000, 10, 0.040);
  untimed.seconds.reset();
  untimed.busbw_gbps.reset();
  const TraceSummary summary = summary_of({untimed}, 0);
  const TenMicrosecondFabric fabric;
  const FabricComparison comparison = compare_with_fabric(summary, fabric, 1);
  ASSERT_EQ(comparison.classes.size(), 1u);
  const FabricFigure& figure = comparison.classes[0];
  ASSERT_TRUE(figure.seconds.has_value());
  EXPECT_NEAR(*figure.seconds, 0.01001, 1e-12);
  ASSERT_TRUE(figure.busbw_gbps.has_value());
  EXPECT_NEAR(*figure.busbw_gbps, 1.5 * 100e6 / 0.01001 / 1e9, 1e-9);
  EXPECT_FALSE(figure.ratio.has_value());
  EXPECT_EQ(comparison.job_seconds, 0);
  EXPECT_EQ(comparison.verdict,
            "the traces timed none of the calls the fabric has a figure for: its busbw at their sizes is given, with "
            "no ratio (10 us + bytes at 10 GB/s)");
  EXPECT_EQ(comparison.cause, "");
}

}  // namespace
}  // namespace commbench
