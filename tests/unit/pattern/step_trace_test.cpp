// --trace's events: one process per rank, one thread per stream, one complete event per
// item that runs, at the item's ready and end times, parsed back as JSON.
#include "commbench/pattern/step_trace.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "commbench/core/error.hpp"

namespace commbench {
namespace {

ScheduleStep compute(double seconds, const std::string& label) {
  ScheduleStep step;
  step.kind = StepKind::compute;
  step.stream = "compute";
  step.compute_seconds = seconds;
  step.label = label;
  return step;
}

ScheduleStep allreduce_on_data(std::uint64_t bytes) {
  ScheduleStep step;
  step.kind = StepKind::collective;
  step.stream = "data";
  step.op = Collective::allreduce;
  step.group = GroupRole::data;
  step.bytes = bytes;
  step.phase = StepPhase::backward;
  step.label = "bucket 0";
  step.layer = 3;
  return step;
}

TEST(StepTrace, OneCompleteEventPerItemThatRuns) {
  RankSchedule schedule;
  schedule.steps = {compute(0.002, "layer 3 backward"), allreduce_on_data(1 << 20), compute(0, "optimizer step")};
  const std::vector<ItemTiming> timings = {{0.0, 0.002}, {0.002, 0.0035}, {0.0035, 0.0036}};
  const std::string text = chrome_trace({rank_trace_events(schedule, timings, 1, "rank 1 (host n1)")}, "ddp step");
  const auto trace = nlohmann::json::parse(text);
  std::vector<nlohmann::json> complete, threads;
  for (const auto& event : trace["traceEvents"]) {
    if (event["ph"] == "X") complete.push_back(event);
    if (event["name"] == "thread_name") threads.push_back(event);
  }
  ASSERT_EQ(complete.size(), 2u);  // the optimizer step of no time does not run
  EXPECT_EQ(complete[0]["name"], "layer 3 backward");
  EXPECT_EQ(complete[0]["cat"], "compute");
  EXPECT_DOUBLE_EQ(complete[0]["dur"].get<double>(), 2000.0);
  EXPECT_EQ(complete[1]["cat"], "allreduce/data");
  EXPECT_DOUBLE_EQ(complete[1]["ts"].get<double>(), 2000.0);
  EXPECT_DOUBLE_EQ(complete[1]["dur"].get<double>(), 1500.0);
  EXPECT_EQ(complete[1]["args"]["bytes"], 1 << 20);
  EXPECT_EQ(complete[1]["args"]["phase"], "backward");
  EXPECT_EQ(complete[1]["args"]["layer"], 3);
  EXPECT_EQ(complete[1]["pid"], 1);
  EXPECT_NE(complete[0]["tid"], complete[1]["tid"]);  // each stream its own track
  ASSERT_EQ(threads.size(), 2u);
  EXPECT_EQ(threads[0]["args"]["name"], "compute");
  EXPECT_EQ(threads[1]["args"]["name"], "data");
  EXPECT_EQ(trace["otherData"]["step"], "ddp step");
}

TEST(StepTrace, TimingsMustMatchTheSchedule) {
  RankSchedule schedule;
  schedule.steps = {compute(0.001, "x")};
  EXPECT_THROW(rank_trace_events(schedule, {}, 0, "rank 0"), UsageError);
}

}  // namespace
}  // namespace commbench
