// bench-replay --replay's last table: each operation's calls and busbw in the job beside
// the replayed step's.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "commbench/analysis/replay_run.hpp"

namespace commbench {
namespace {

TracedClass traced(std::string op, std::uint64_t calls, double seconds, std::optional<double> busbw) {
  TracedClass c;
  c.op = std::move(op);
  c.calls = calls;
  c.seconds = seconds;
  c.busbw_gbps = busbw;
  return c;
}

CommunicationTypeReport type(Collective op, std::uint64_t count, double seconds, double busbw) {
  CommunicationTypeReport t;
  t.totals.type.op = op;
  t.totals.type.group = GroupRole::data;
  t.totals.count = count;
  t.totals.seconds = seconds;
  t.busbw_gbps = busbw;
  return t;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(ReplayedBesideJob, TheJobsBusbwIsWeightedByEachClassesTimeAndBarriersCountAsAllreduces) {
  TraceSummary job;
  // allgather: 2 calls of 1 s at 1 GB/s and 1 call of 2 s at 4 GB/s: (2 + 8) / 4 = 2.5.
  job.classes = {traced("allgather", 2, 1.0, 1.0), traced("allgather", 1, 2.0, 4.0), traced("allreduce", 3, 0.5, 2.0),
                 traced("barrier", 2, 0.1, std::nullopt)};
  PatternReport replayed;
  replayed.types = {type(Collective::allgather, 3, 1.0, 5.0), type(Collective::allreduce, 5, 1.0, 1.0)};
  const std::vector<std::string> lines = lines_of(replayed_beside_job(job, replayed));
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "# each operation in the job and replayed here (busbw GB/s)");
  std::istringstream allgather(lines[2]), allreduce(lines[3]);
  std::string op, job_busbw, replayed_busbw, ratio;
  std::uint64_t job_calls = 0, replayed_calls = 0;
  allgather >> op >> job_calls >> job_busbw >> replayed_calls >> replayed_busbw >> ratio;
  EXPECT_EQ(op, "allgather");
  EXPECT_EQ(job_calls, 3u);
  EXPECT_EQ(job_busbw, "2.5");
  EXPECT_EQ(replayed_calls, 3u);
  EXPECT_EQ(replayed_busbw, "5");
  EXPECT_EQ(ratio, "2");
  allreduce >> op >> job_calls >> job_busbw >> replayed_calls >> replayed_busbw >> ratio;
  EXPECT_EQ(op, "allreduce");
  EXPECT_EQ(job_calls, 5u);  // 3 allreduces and 2 barriers
  EXPECT_EQ(job_busbw, "2");
  EXPECT_EQ(ratio, "0.5");
}

TEST(ReplayedBesideJob, AnOperationWithoutAFigureOnOneSideHasNoRatio) {
  TraceSummary job;
  job.classes = {traced("broadcast", 1, 0.5, std::nullopt)};
  PatternReport replayed;
  replayed.types = {type(Collective::broadcast, 1, 0.0, 0.0)};
  const std::vector<std::string> lines = lines_of(replayed_beside_job(job, replayed));
  ASSERT_EQ(lines.size(), 3u);
  std::istringstream row(lines[2]);
  std::string op, job_busbw, replayed_busbw, ratio;
  std::uint64_t job_calls = 0, replayed_calls = 0;
  row >> op >> job_calls >> job_busbw >> replayed_calls >> replayed_busbw >> ratio;
  EXPECT_EQ(job_busbw, "-");
  EXPECT_EQ(replayed_busbw, "-");
  EXPECT_EQ(ratio, "-");
}

}  // namespace
}  // namespace commbench
