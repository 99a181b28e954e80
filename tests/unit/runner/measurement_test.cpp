#include "commbench/runner/measurement.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include <csignal>
#include <functional>
#include <string>
#include <vector>

#include <unistd.h>

#include "commbench/backend/local_bootstrap.hpp"
#include "commbench/runner/interruption.hpp"

namespace commbench {
namespace {

// A workload whose iterations take scripted times and which records what the loop asked.
class ScriptedWorkload final : public Workload {
 public:
  explicit ScriptedWorkload(std::function<double(std::size_t batch_index)> seconds_per_iteration)
      : seconds_per_iteration_(std::move(seconds_per_iteration)) {}
  std::string describe() const override { return "scripted step"; }
  void prepare() override { events.push_back("prepare"); }
  std::uint64_t check() override {
    events.push_back("check");
    return wrong;
  }
  double time(std::uint64_t iterations) override {
    events.push_back("time " + std::to_string(iterations));
    batches.push_back(iterations);
    if (on_time) on_time();
    return static_cast<double>(iterations) * seconds_per_iteration_(batches.size() - 1);
  }
  void release() override { events.push_back("release"); }

  std::vector<std::string> events;
  std::vector<std::uint64_t> batches;
  std::uint64_t wrong = 0;
  std::function<void()> on_time;

 private:
  std::function<double(std::size_t)> seconds_per_iteration_;
};

MeasurementSettings settings(double target_batch_seconds = 1e-3, bool check = false) {
  MeasurementSettings result;
  result.warmup_iterations = 2;
  result.check = check;
  result.target_batch_seconds = target_batch_seconds;
  return result;
}

TEST(MeasurementLoop, FixedCountRunsExactlyThatManyIterationsInCalibratedBatches) {
  LocalBootstrap group;
  const FixedCountCriterion criterion(25);
  MeasurementLoop loop(group, criterion, settings());
  ScriptedWorkload workload([](std::size_t) { return 1e-4; });  // 10 per 1 ms batch
  const Measurement m = loop.measure(workload);
  // warm-up 2, calibration 1, then batches of 10 capped to what is left: 10, 10, 5.
  EXPECT_EQ(workload.batches, (std::vector<std::uint64_t>{2, 1, 10, 10, 5}));
  EXPECT_EQ(m.iterations, 25u);
  EXPECT_EQ(m.samples, 3u);
  EXPECT_EQ(m.stop_reason, StopReason::fixed_count);
  EXPECT_DOUBLE_EQ(m.slowest_seconds, 1e-4);
  EXPECT_FALSE(m.wrong.has_value());  // not checked
  EXPECT_EQ(workload.events.front(), "prepare");
  EXPECT_EQ(workload.events.back(), "release");
}

TEST(MeasurementLoop, ABatchLastsAtLeastTheTargetTime) {
  LocalBootstrap group;
  const FixedCountCriterion criterion(8);
  MeasurementLoop loop(group, criterion, settings());
  ScriptedWorkload workload([](std::size_t) { return 3e-4; });  // 3.33 per 1 ms batch
  loop.measure(workload);
  // warm-up 2, calibration 1, then batches of 4 (1.2 ms; 3 would last 0.9 ms).
  EXPECT_EQ(workload.batches, (std::vector<std::uint64_t>{2, 1, 4, 4}));
}

TEST(MeasurementLoop, FirstBatchResizesFromSteadyStateNotTheColdCalibration) {
  LocalBootstrap group;
  const RelativeNoiseCriterion criterion(3, 0.5, 10.0);
  MeasurementLoop loop(group, criterion, settings());
  // The single calibration operation is cold (1 ms); steady state is 10 us.
  ScriptedWorkload workload([](std::size_t batch) { return batch <= 1 ? 1e-3 : 1e-5; });
  const Measurement m = loop.measure(workload);
  ASSERT_GE(workload.batches.size(), 5u);
  EXPECT_EQ(workload.batches[2], 1u);    // sized from the cold 1 ms calibration
  EXPECT_EQ(workload.batches[3], 100u);  // re-sized from the first batch: 1 ms / 10 us
  EXPECT_EQ(m.stop_reason, StopReason::noise_target);
  EXPECT_EQ(m.samples, 3u);
}

TEST(MeasurementLoop, QuietTimesStopOnTheNoiseTargetAtTheSampleFloor) {
  LocalBootstrap group;
  const RelativeNoiseCriterion criterion(10, 0.01, 100.0);
  MeasurementLoop loop(group, criterion, settings());
  ScriptedWorkload workload([](std::size_t) { return 2e-4; });
  const Measurement m = loop.measure(workload);
  EXPECT_EQ(m.stop_reason, StopReason::noise_target);
  EXPECT_EQ(m.samples, 10u);
  ASSERT_TRUE(m.noise.has_value());
  EXPECT_LT(*m.noise, 1e-12);
  EXPECT_DOUBLE_EQ(m.p50_seconds, 2e-4);
}

TEST(MeasurementLoop, NoisyTimesStopOnTheTimeLimit) {
  LocalBootstrap group;
  const RelativeNoiseCriterion criterion(4, 1e-9, 0.0);  // never quiet enough, out of time at once
  MeasurementLoop loop(group, criterion, settings());
  ScriptedWorkload workload([](std::size_t batch) { return batch % 2 == 0 ? 1e-4 : 3e-4; });
  const Measurement m = loop.measure(workload);
  EXPECT_EQ(m.stop_reason, StopReason::time_limit);
  EXPECT_EQ(m.samples, 4u);
  ASSERT_TRUE(m.noise.has_value());
  EXPECT_GT(*m.noise, 0.1);
}

TEST(MeasurementLoop, CheckRunsBeforeWarmUpAndNamesTheFirstWrongRank) {
  LocalBootstrap group;
  const FixedCountCriterion criterion(1);
  MeasurementLoop loop(group, criterion, settings(1e-3, true));
  ScriptedWorkload workload([](std::size_t) { return 1e-3; });
  workload.wrong = 7;
  const Measurement m = loop.measure(workload);
  ASSERT_GE(workload.events.size(), 3u);
  EXPECT_EQ(workload.events[0], "prepare");
  EXPECT_EQ(workload.events[1], "check");
  EXPECT_EQ(workload.events[2], "time 2");  // the warm-up
  EXPECT_EQ(m.wrong, 7u);
  ASSERT_TRUE(m.check_failure.has_value());
  EXPECT_EQ(*m.check_failure, "scripted step: 7 wrong elements, first on rank 0 (host " + group.hostname() + ")");
}

TEST(MeasurementLoop, ACleanCheckIsRecordedAsZeroWrong) {
  LocalBootstrap group;
  const FixedCountCriterion criterion(1);
  MeasurementLoop loop(group, criterion, settings(1e-3, true));
  ScriptedWorkload workload([](std::size_t) { return 1e-3; });
  const Measurement m = loop.measure(workload);
  EXPECT_EQ(m.wrong, 0u);
  EXPECT_FALSE(m.check_failure.has_value());
}

// Sends `signal` to this process, as a launcher does, and waits until it is recorded: the
// handlers take it on their own thread, not on this one.
void signal_this_process(int signal) {
  kill(getpid(), signal);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (pending_interruption() == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

// Raises `signal` in the workload's `at_batch`-th batch and measures: the exit code of the
// Interrupted that ends the measurement, which must name `signal`; 0 when none does.
int signal_stopping(MeasurementLoop& loop, ScriptedWorkload& workload, std::size_t at_batch, int signal) {
  workload.on_time = [&] {
    if (workload.batches.size() == at_batch) signal_this_process(signal);
  };
  try {
    loop.measure(workload);
  } catch (const Interrupted& e) {
    clear_interruption();
    EXPECT_EQ(e.signal_number(), signal);
    return static_cast<int>(e.exit_code());
  }
  clear_interruption();
  ADD_FAILURE() << "no Interrupted";
  return 0;
}

TEST(MeasurementLoop, ASignalEndsTheMeasurementWithTheAgreedSignal) {
  ASSERT_TRUE(install_interruption_handlers());
  LocalBootstrap group;
  const FixedCountCriterion criterion(1000);
  MeasurementLoop loop(group, criterion, settings());
  ScriptedWorkload workload([](std::size_t) { return 1e-4; });
  EXPECT_EQ(signal_stopping(loop, workload, 4, SIGTERM), 128 + SIGTERM);
  EXPECT_EQ(workload.batches.size(), 4u);  // stopped at the agreement after the batch that saw it
}

TEST(MeasurementLoop, ALongWarmUpRunsInChunksOfATenthOfASecondAndASignalStopsIt) {
  ASSERT_TRUE(install_interruption_handlers());
  LocalBootstrap group;
  const FixedCountCriterion criterion(1);
  MeasurementSettings long_warm_up = settings();
  long_warm_up.warmup_iterations = 2500;
  MeasurementLoop loop(group, criterion, long_warm_up);
  ScriptedWorkload whole([](std::size_t) { return 1e-4; });
  loop.measure(whole);
  ASSERT_GE(whole.batches.size(), 4u);
  // 2 first, then 0.1 s / 0.1 ms = 1000 a chunk, the rest last.
  EXPECT_EQ(std::vector<std::uint64_t>(whole.batches.begin(), whole.batches.begin() + 4),
            (std::vector<std::uint64_t>{2, 1000, 1000, 498}));
  long_warm_up.warmup_iterations = std::uint64_t{1} << 40;  // hours of it
  MeasurementLoop endless(group, criterion, long_warm_up);
  ScriptedWorkload workload([](std::size_t) { return 1e-4; });
  EXPECT_EQ(signal_stopping(endless, workload, 2, SIGINT), 128 + SIGINT);
  EXPECT_EQ(workload.batches, (std::vector<std::uint64_t>{2, 1000}));  // stopped at the chunk that saw it
}

// The budget is held against the wall clock; the scripted times set the pace it is
// computed from. A sleep only lasts at least its length, so "past the budget" is certain
// and "within it" is made certain by a budget of hours.
TEST(MeasurementLoop, ABudgetSpentByTheFirstWarmUpIterationCutsTheReadingThere) {
  LocalBootstrap group;
  const FixedCountCriterion criterion(10);
  MeasurementSettings bounded = settings();
  bounded.budget = ReadingBudget{};
  bounded.budget->planned_iterations = 13;
  bounded.budget->floor_seconds = 0;
  MeasurementLoop loop(group, criterion, bounded);
  // Each iteration says it took 1 us: the budget is 3 x 13 x 1 us = 39 us; 1 ms passes.
  ScriptedWorkload workload([](std::size_t) { return 1e-6; });
  workload.on_time = [] { std::this_thread::sleep_for(std::chrono::milliseconds(1)); };
  const Measurement m = loop.measure(workload);
  EXPECT_EQ(workload.batches, (std::vector<std::uint64_t>{1}));  // one warm-up iteration, no more
  EXPECT_TRUE(m.cut_short);
  EXPECT_EQ(m.moved_iterations, 1u);
  EXPECT_EQ(m.iterations, 0u);  // nothing timed
  EXPECT_EQ(m.stop_reason, StopReason::time_limit);
  EXPECT_DOUBLE_EQ(m.budget_seconds, 39e-6);
  EXPECT_GE(m.elapsed_seconds, 1e-3);
  EXPECT_DOUBLE_EQ(m.slowest_seconds, 1e-6);  // the pace of what it moved
  EXPECT_EQ(workload.events.back(), "release");
}

TEST(MeasurementLoop, AReadingWithinItsBudgetRunsItsFixedCountInOneIterationChunksOfWarmUp) {
  LocalBootstrap group;
  const FixedCountCriterion criterion(10);
  MeasurementSettings bounded = settings();
  bounded.budget = ReadingBudget{};
  bounded.budget->planned_iterations = 13;
  MeasurementLoop loop(group, criterion, bounded);
  ScriptedWorkload workload([](std::size_t) { return 1000.0; });  // a budget of 39000 s
  const Measurement m = loop.measure(workload);
  // Warm-up one iteration at a time (the budget is checked after each), calibration, then
  // the fixed count in batches of 1 (an iteration lasts longer than the 1 ms target).
  EXPECT_EQ(workload.batches, (std::vector<std::uint64_t>(13, 1)));
  EXPECT_FALSE(m.cut_short);
  EXPECT_EQ(m.iterations, 10u);
  EXPECT_EQ(m.moved_iterations, 13u);
  EXPECT_DOUBLE_EQ(m.budget_seconds, 39000.0);
  EXPECT_EQ(m.stop_reason, StopReason::fixed_count);
}

TEST(MeasurementLoop, WithoutABudgetNothingIsCut) {
  LocalBootstrap group;
  const FixedCountCriterion criterion(3);
  MeasurementLoop loop(group, criterion, settings());
  ScriptedWorkload workload([](std::size_t) { return 1e-6; });
  workload.on_time = [] { std::this_thread::sleep_for(std::chrono::milliseconds(1)); };
  const Measurement m = loop.measure(workload);
  EXPECT_FALSE(m.cut_short);
  EXPECT_EQ(m.iterations, 3u);
  EXPECT_EQ(m.budget_seconds, 0.0);
}

TEST(Interruption, SigintOutranksSigtermInTheRanksAgreement) {
  ASSERT_TRUE(install_interruption_handlers());
  signal_this_process(SIGTERM);
  const int sigterm_key = interruption_agreement_key();
  clear_interruption();
  signal_this_process(SIGINT);
  const int sigint_key = interruption_agreement_key();
  clear_interruption();
  EXPECT_EQ(signal_of_agreement_key(std::max(sigterm_key, sigint_key)), SIGINT);
  EXPECT_EQ(signal_of_agreement_key(std::max(sigterm_key, 0)), SIGTERM);
  EXPECT_EQ(signal_of_agreement_key(0), 0);
}

}  // namespace
}  // namespace commbench
