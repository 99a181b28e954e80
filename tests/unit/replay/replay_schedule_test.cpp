// The traced step as bench-patterns' schedule, from the real fixtures
// (tests/fixtures/traces): every call of the profiled step in its order and size, the
// time between calls as compute that together spans the step, and the calls it cannot
// replay refused.
#include "commbench/analysis/replay_schedule.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "commbench/replay/pytorch_trace_reader.hpp"
#include "usage_error.hpp"

namespace commbench {
namespace {

using testing::usage_error_of;

std::vector<RankTrace> fixture(const std::string& name) {
  std::vector<RankTrace> traces;
  for (int rank = 0; rank < 4; ++rank)
    traces.push_back(read_pytorch_trace(
        fmt::format("{}/tests/fixtures/traces/{}/rank{}.json.gz", COMMBENCH_SOURCE_DIR, name, rank)));
  return traces;
}

TEST(ReplaySchedule, EveryCallOfTheStepInOrderWithTheTimeBetweenAsCompute) {
  for (const char* name : {"ddp-default", "fsdp2", "zero3"}) {
    SCOPED_TRACE(name);
    const std::vector<RankTrace> traces = fixture(name);
    std::vector<std::string> notes;
    const std::vector<RankSchedule> schedules = extract_schedules(traces, notes);
    ASSERT_EQ(schedules.size(), 4u);
    for (const RankTrace& trace : traces) {
      const RankSchedule& schedule = schedules[static_cast<std::size_t>(trace.rank)];
      EXPECT_EQ(schedule.world_rank, trace.rank);
      std::vector<const ScheduleStep*> calls;
      double compute = 0;
      for (std::size_t i = 0; i < schedule.steps.size(); ++i) {
        const ScheduleStep& step = schedule.steps[i];
        if (step.kind == StepKind::compute) {
          compute += step.compute_seconds;
          continue;
        }
        calls.push_back(&step);
        EXPECT_EQ(step.group, GroupRole::data);
        ASSERT_EQ(step.waits_for, std::vector<std::size_t>{i - 1});
        EXPECT_EQ(schedule.steps[i - 1].kind, StepKind::compute);
      }
      // The fixtures profile one step and every call falls in it.
      ASSERT_EQ(calls.size(), trace.collectives.size());
      for (std::size_t i = 0; i < calls.size(); ++i) {
        if (trace.collectives[i].op == "barrier") continue;
        EXPECT_EQ(calls[i]->bytes, trace.collectives[i].bytes);
        EXPECT_EQ(calls[i]->op, *trace.collectives[i].collective);
      }
      ASSERT_EQ(trace.steps.size(), 1u);
      EXPECT_NEAR(compute, (trace.steps[0].end_us - trace.steps[0].start_us) * 1e-6, 1e-6);
    }
  }
}

TEST(ReplaySchedule, CallsItCannotReplayAreRefused) {
  std::vector<RankTrace> traces = fixture("ddp-default");
  std::vector<std::string> notes;
  std::vector<RankTrace> three(traces.begin(), traces.begin() + 3);
  EXPECT_EQ(usage_error_of([&] { extract_schedules(three, notes); }),
            "--dump-schedule: rank 3's trace is missing: a schedule needs every rank's");
  traces[1].collectives[0].group_ranks = 2;
  EXPECT_NE(usage_error_of([&] { extract_schedules(traces, notes); }).find("runs on a group of 2 of the 4 ranks"),
            std::string::npos);
  traces[1].collectives[0].group_ranks = 4;
  traces[1].collectives[0].op = "send";
  traces[1].collectives[0].collective.reset();
  EXPECT_NE(usage_error_of([&] { extract_schedules(traces, notes); }).find("point-to-point calls are not replayed"),
            std::string::npos);
}

TEST(ReplaySchedule, ACallOnAGroupTheTraceDoesNotNameIsNotRunButIsCompared) {
  std::vector<RankTrace> traces = fixture("ddp-default");
  std::vector<std::string> notes;
  traces[2].collectives[1].group_ranks = 0;  // gloo's trace of a job with groups of several sizes
  const std::string refusal = usage_error_of([&] { extract_schedules(traces, notes, {"--replay", true}); });
  EXPECT_EQ(refusal.rfind("--replay: ", 0), 0u) << refusal;
  EXPECT_NE(refusal.find(": call 2 (" + traces[2].collectives[1].name +
                         ") runs on a process group the trace does not name (the job's groups have several sizes)"),
            std::string::npos)
      << refusal;
  const std::vector<RankSchedule> compared = extract_schedules(traces, notes, {"--pattern", false});
  EXPECT_EQ(compared.size(), 4u);
  EXPECT_EQ(notes.back().rfind("--pattern: ", 0), 0u) << notes.back();
}

}  // namespace
}  // namespace commbench
