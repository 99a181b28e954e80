// --tune's search without a job, on landscapes whose best point is known (noise, pruning,
// confirmation, the budget), and the cost model fitted to a measured step. The knobs
// themselves: tuning_space_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <tuple>
#include <vector>

#include "commbench/core/error.hpp"
#include "commbench/pattern/fitted_cost_model.hpp"
#include "commbench/pattern/step_prediction.hpp"
#include "commbench/pattern/rank_memory.hpp"
#include "commbench/pattern/tuning_search.hpp"
#include "commbench/pattern/tuning_space.hpp"
#include "schedule_test_support.hpp"

namespace commbench {
namespace {

using testing::config_of;
using testing::small_llama;

// A landscape known in advance: step time from the knobs' values, optional noise and
// model, and a budget of so many trials.
class LandscapeTrials : public TuningTrials {
 public:
  std::function<double(const PatternConfig&)> step;
  std::function<std::optional<double>(const PatternConfig&)> model;
  double noise = 0;
  int budget_trials = 1000;
  int measured = 0;

  TrialMeasurement measure(const PatternConfig& config) override {
    ++measured;
    TrialMeasurement result;
    result.step_seconds = step(config);
    result.exposed_seconds = result.step_seconds / 2;
    result.noise = noise;
    return result;
  }
  std::optional<double> predict(const PatternConfig& config) override {
    return model ? model(config) : std::nullopt;
  }
  bool room_for_another() override { return measured < budget_trials; }
  // What the search said it decided, in the order it said it: (index, verdict, measured at the time).
  std::vector<std::tuple<std::size_t, TrialVerdict, int>> decisions;
  void decided(std::size_t index, const TuningTrial& trial) override {
    decisions.emplace_back(index, trial.verdict, measured);
  }
};

// Best at reduce_bucket_size 5e7 and overlap on; the other knobs do not matter.
double zero3_landscape(const PatternConfig& config) {
  const double bucket = static_cast<double>(config.zero.reduce_bucket_size);
  return 1.0 + std::abs(std::log10(bucket / 5e7)) * 0.2 + (config.zero.overlaps(3) ? 0 : 0.5);
}

TEST(TuningSearch, FindsTheKnownBestAndKeepsWhatDoesNotMatter) {
  PatternConfig start = config_of(PatternKind::zero3, small_llama(4), 4);
  start = with_knob(start, "zero_optimization.overlap_comm", "false");
  LandscapeTrials trials;
  trials.step = zero3_landscape;
  const auto knobs = tuning_space(start);
  const TuningOutcome outcome = tune_pattern(start, knobs, trials);
  EXPECT_TRUE(outcome.best.zero.overlaps(3));
  EXPECT_EQ(outcome.best.zero.reduce_bucket_size, 50'000'000u);
  // Knobs that change nothing stay as the user had them.
  EXPECT_EQ(outcome.best.zero.stage3_max_live_parameters, start.zero.stage3_max_live_parameters);
  EXPECT_EQ(outcome.best.zero.stage3_param_persistence_threshold, start.zero.stage3_param_persistence_threshold);
  std::size_t candidates = 0;
  for (const TuningKnob& knob : knobs) candidates += knob.candidates.size() - 1;
  // Every candidate has a row, then the best and the start measured again: one round, as
  // every run of the best beat every run of the start by far more than twice the margin.
  const std::size_t confirmation = 2;
  EXPECT_EQ(outcome.trials.size(), 1 + candidates + confirmation);
  EXPECT_EQ(trials.measured, static_cast<int>(1 + candidates + confirmation));
  EXPECT_EQ(outcome.trials.back().verdict, TrialVerdict::confirm);
  EXPECT_TRUE(outcome.confirmed);
  EXPECT_EQ(outcome.confirm_rounds, 1);
  EXPECT_NEAR(outcome.speedup(), 1.0 / (1.0 + 0.2 * std::log10(5e8 / 5e7) + 0.5), 1e-12);
  EXPECT_FALSE(outcome.budget_exhausted);
}

TEST(TuningSearch, ABestThatOnlyDriftMadeFasterIsNotConfirmed) {
  // Every setting takes the same time, but each trial runs 3 % faster than the one before
  // (a machine warming up): later candidates win the search, not the confirmation pair.
  const PatternConfig start = config_of(PatternKind::ddp, small_llama(4), 4);
  LandscapeTrials trials;
  trials.step = [&trials](const PatternConfig&) { return std::pow(0.97, trials.measured); };
  const TuningOutcome outcome = tune_pattern(start, tuning_space(start), trials);
  ASSERT_TRUE(outcome.unconfirmed.has_value());
  EXPECT_NE(outcome.unconfirmed->front().second, "25");
  EXPECT_EQ(outcome.best.ddp.bucket_cap_mb, 25);  // the user's settings stand
  EXPECT_EQ(outcome.best_settings, outcome.start().settings);
  EXPECT_DOUBLE_EQ(outcome.speedup(), 1.0);
}

TEST(TuningSearch, OneDisturbedConfirmationRunDoesNotDecide) {
  // 100 MiB buckets halve the step; the first time the best is measured again, other work
  // on the machine makes that run four times slower (as a loaded CI host once did).
  const PatternConfig start = config_of(PatternKind::ddp, small_llama(4), 4);
  LandscapeTrials trials;
  int search_trials = 0;
  trials.step = [&](const PatternConfig& config) {
    const double step = config.ddp.bucket_cap_mb == 100 ? 0.5 : 1.0;
    return trials.measured == search_trials + 1 ? 4 * step : step;
  };
  search_trials = 1 + static_cast<int>(tuning_space(start).front().candidates.size()) - 1;
  const TuningOutcome outcome = tune_pattern(start, tuning_space(start), trials);
  EXPECT_TRUE(outcome.confirmed);
  EXPECT_FALSE(outcome.unconfirmed.has_value());
  EXPECT_EQ(outcome.best.ddp.bucket_cap_mb, 100);
  EXPECT_DOUBLE_EQ(outcome.speedup(), 0.5);  // each side's fastest run
  // Alternating: best, start, then start, best, then best, start.
  std::vector<std::string> order;
  for (const TuningTrial& trial : outcome.trials)
    if (trial.verdict == TrialVerdict::confirm) order.push_back(trial.value);
  EXPECT_EQ(order, (std::vector<std::string>{"best", "start", "start", "best", "best", "start"}));
  EXPECT_EQ(outcome.confirm_rounds, kConfirmRounds);  // the disturbed run left doubt after each round
  EXPECT_DOUBLE_EQ(outcome.trials[static_cast<std::size_t>(search_trials)].measured->step_seconds, 2.0);
}

TEST(TuningSearch, ARoundBeyondDoubtEndsTheConfirmationAndOneWithinTwiceTheMarginDoesNot) {
  const PatternConfig start = config_of(PatternKind::ddp, small_llama(4), 4);
  LandscapeTrials trials;
  const int search_trials = static_cast<int>(tuning_space(start).front().candidates.size());
  // 100 MiB buckets 5 % faster: beyond twice the 2 % margin after the first round.
  trials.step = [](const PatternConfig& config) { return config.ddp.bucket_cap_mb == 100 ? 0.95 : 1.0; };
  TuningOutcome outcome = tune_pattern(start, tuning_space(start), trials);
  EXPECT_EQ(outcome.best.ddp.bucket_cap_mb, 100);
  EXPECT_EQ(outcome.confirm_rounds, 1);
  EXPECT_TRUE(outcome.ended_beyond_doubt);
  EXPECT_EQ(trials.measured, search_trials + 2);
  // 3 % faster: a change (over 2 %), but within twice the margin: every round runs.
  trials.measured = 0;
  trials.step = [](const PatternConfig& config) { return config.ddp.bucket_cap_mb == 100 ? 0.97 : 1.0; };
  outcome = tune_pattern(start, tuning_space(start), trials);
  EXPECT_EQ(outcome.best.ddp.bucket_cap_mb, 100);
  EXPECT_EQ(outcome.confirm_rounds, kConfirmRounds);
  EXPECT_FALSE(outcome.ended_beyond_doubt);
  EXPECT_EQ(trials.measured, search_trials + 2 * kConfirmRounds);
  // 5 % faster, but one run of the start as fast as the best's slowest: no early end.
  trials.measured = 0;
  trials.step = [&trials, search_trials](const PatternConfig& config) {
    if (trials.measured == search_trials + 2) return 0.95;  // the start, measured again in the first round
    return config.ddp.bucket_cap_mb == 100 ? 0.95 : 1.0;
  };
  outcome = tune_pattern(start, tuning_space(start), trials);
  EXPECT_EQ(outcome.confirm_rounds, kConfirmRounds);
  EXPECT_EQ(outcome.best.ddp.bucket_cap_mb, 25);  // the start's fastest run matched the best's
}

TEST(TuningSearch, ConfirmationRoundsTheBudgetHasNoRoomForAreNotRun) {
  const PatternConfig start = config_of(PatternKind::ddp, small_llama(4), 4);
  LandscapeTrials trials;
  // 3 % faster: within twice the margin, so no round ends the confirmation early.
  trials.step = [](const PatternConfig& config) { return config.ddp.bucket_cap_mb == 100 ? 0.97 : 1.0; };
  const int search_trials = static_cast<int>(tuning_space(start).front().candidates.size());
  trials.budget_trials = search_trials + 3;  // one whole round and half of the next
  const TuningOutcome outcome = tune_pattern(start, tuning_space(start), trials);
  EXPECT_TRUE(outcome.confirmed);
  EXPECT_FALSE(outcome.budget_exhausted);  // every candidate was measured
  EXPECT_EQ(outcome.best.ddp.bucket_cap_mb, 100);
  EXPECT_EQ(outcome.trials.size(), static_cast<std::size_t>(search_trials + 3));
  EXPECT_EQ(outcome.confirm_rounds, 1);
  EXPECT_FALSE(outcome.ended_beyond_doubt);  // the budget cut the rounds, not a verdict
  trials.measured = 0;
  trials.budget_trials = search_trials + 1;  // not one whole round: the trials' figures stand
  const TuningOutcome unconfirmed = tune_pattern(start, tuning_space(start), trials);
  EXPECT_FALSE(unconfirmed.confirmed);
  EXPECT_TRUE(unconfirmed.budget_exhausted);
  EXPECT_EQ(unconfirmed.best.ddp.bucket_cap_mb, 100);
}

TEST(TuningSearch, AGainWithinTheNoiseIsNotTaken) {
  const PatternConfig start = config_of(PatternKind::ddp, small_llama(4), 4);
  LandscapeTrials trials;
  // 25 MiB (the start) takes 1.0; 50 MiB is 3 % faster, inside the trials' 5 % noise.
  trials.step = [](const PatternConfig& config) { return config.ddp.bucket_cap_mb == 50 ? 0.97 : 1.0; };
  trials.noise = 0.05;
  EXPECT_EQ(tune_pattern(start, tuning_space(start), trials).best.ddp.bucket_cap_mb, 25);
  trials.noise = 0.01;  // quiet trials: 3 % is beyond the 2 % floor
  EXPECT_EQ(tune_pattern(start, tuning_space(start), trials).best.ddp.bucket_cap_mb, 50);
}

// What the model predicts for DDP's bucket sizes: below 10 MiB twice as slow, 10 and 50 MiB
// 1 % faster (under the 2 % a change needs), 100 and 250 MiB a fifth faster.
std::optional<double> bucket_model(const PatternConfig& config) {
  const int mb = config.ddp.bucket_cap_mb;
  return mb < 10 ? 2.0 : mb < 100 ? 0.99 : 0.8;
}

std::map<std::string, TrialVerdict> verdicts_by_value(const TuningOutcome& outcome) {
  std::map<std::string, TrialVerdict> verdicts;
  for (const TuningTrial& trial : outcome.trials)
    if (!trial.knob.empty()) verdicts[trial.value] = trial.verdict;
  return verdicts;
}

TEST(TuningSearch, OnlyWhatTheModelPredictsToSaveEnoughIsMeasuredAndMeasurementDecides) {
  const PatternConfig start = config_of(PatternKind::ddp, small_llama(4), 4);
  LandscapeTrials trials;
  // Measured, 100 MiB is a fifth faster; 250 MiB is no faster than the start.
  trials.step = [](const PatternConfig& config) { return config.ddp.bucket_cap_mb == 100 ? 0.8 : 1.0; };
  trials.model = bucket_model;
  const TuningOutcome outcome = tune_pattern(start, tuning_space(start), trials);
  const auto verdicts = verdicts_by_value(outcome);
  EXPECT_EQ(verdicts.at("1"), TrialVerdict::pruned);   // predicted slower
  EXPECT_EQ(verdicts.at("10"), TrialVerdict::pruned);  // predicted 1 % faster: under the 2 % a change needs
  EXPECT_EQ(verdicts.at("50"), TrialVerdict::pruned);
  EXPECT_EQ(verdicts.at("100"), TrialVerdict::better);
  // Predicted no faster than the new best (100 MiB): not run.
  EXPECT_EQ(verdicts.at("250"), TrialVerdict::pruned);
  EXPECT_EQ(outcome.best.ddp.bucket_cap_mb, 100);
  EXPECT_EQ(trials.measured, 2 + 2);  // start, 100, then 100 and start again: a round beyond doubt
}

TEST(TuningSearch, ASavingTheJobsSpreadWouldHideEarnsNoTrial) {
  const PatternConfig start = config_of(PatternKind::ddp, small_llama(4), 4);
  LandscapeTrials trials;
  trials.step = [](const PatternConfig& config) { return config.ddp.bucket_cap_mb == 100 ? 0.8 : 1.0; };
  trials.model = bucket_model;
  // The job's steps vary by 0.25 s: the model's best, 0.2 s faster, could not show in it.
  const TuningOutcome outcome = tune_pattern(start, tuning_space(start), trials, {.needed_saving_seconds = 0.25});
  for (const auto& [value, verdict] : verdicts_by_value(outcome))
    if (verdict != TrialVerdict::unchanged) EXPECT_EQ(verdict, TrialVerdict::pruned) << value;
  EXPECT_EQ(trials.measured, 1);  // the start alone
  EXPECT_EQ(outcome.best_settings, outcome.start().settings);
  EXPECT_FALSE(outcome.confirmed);
  // A needed saving under 2 % of the predicted step leaves the 2 % floor in force.
  EXPECT_FALSE(predicted_to_save_enough(0.99, 1.0, {.needed_saving_seconds = 0.001}));
  EXPECT_TRUE(predicted_to_save_enough(0.98, 1.0, {.needed_saving_seconds = 0.001}));
  EXPECT_FALSE(predicted_to_save_enough(0.8, 1.0, {.needed_saving_seconds = 0.25}));
  EXPECT_TRUE(predicted_to_save_enough(0.75, 1.0, {.needed_saving_seconds = 0.25}));
}

TEST(TuningSearch, TheBudgetEndsTheSearchAndEveryUnmeasuredCandidateIsListed) {
  const PatternConfig start = config_of(PatternKind::zero3, small_llama(4), 4);
  LandscapeTrials trials;
  trials.step = zero3_landscape;
  trials.budget_trials = 3;
  const TuningOutcome outcome = tune_pattern(start, tuning_space(start), trials);
  EXPECT_TRUE(outcome.budget_exhausted);
  EXPECT_EQ(trials.measured, 3);
  std::size_t skipped = 0;
  for (const TuningTrial& trial : outcome.trials) {
    skipped += trial.verdict == TrialVerdict::skipped;
    EXPECT_EQ(trial.measured.has_value(), trial.verdict != TrialVerdict::skipped);
  }
  EXPECT_EQ(skipped, outcome.trials.size() - 3);
}

TEST(TuningSearch, ACandidateWhoseStepIsTheBestsCallForCallIsNotRun) {
  const PatternConfig start = config_of(PatternKind::zero3, small_llama(4), 4);
  // The optimizer's knobs change no call of the step.
  class OptimizerBlindTrials : public LandscapeTrials {
   public:
    bool same_step(const PatternConfig& candidate, const PatternConfig& best) override {
      PatternConfig as_best = candidate;
      as_best.zero.contiguous_gradients = best.zero.contiguous_gradients;
      as_best.zero.sub_group_size = best.zero.sub_group_size;
      return settings_text(as_best) == settings_text(best);
    }
    static std::string settings_text(const PatternConfig& config) {
      std::string text;
      for (const TuningKnob& knob : tuning_space(config)) text += knob_value(config, knob.key) + ";";
      return text;
    }
  } trials;
  trials.step = zero3_landscape;
  const TuningOutcome outcome = tune_pattern(start, tuning_space(start), trials);
  std::size_t unchanged = 0;
  for (const TuningTrial& trial : outcome.trials) {
    const bool optimizer_knob = trial.knob == "zero_optimization.contiguous_gradients" ||
                                trial.knob == "zero_optimization.sub_group_size";
    EXPECT_EQ(trial.verdict == TrialVerdict::unchanged, optimizer_knob) << trial.knob << "=" << trial.value;
    if (trial.verdict == TrialVerdict::unchanged) {
      ++unchanged;
      EXPECT_FALSE(trial.measured.has_value());
    }
  }
  EXPECT_EQ(unchanged, 1u + 2u);  // contiguous_gradients' other value, sub_group_size's other two
  EXPECT_EQ(name_of(TrialVerdict::unchanged), "unchanged");
}

TEST(TuningSearch, ACandidateOverTheMemoryLimitIsNotRunTheStartAlwaysIs) {
  // Faster the larger the reduce bucket, which ZeRO-3 allocates whole with
  // contiguous_gradients: the two largest do not fit under the limit.
  class MemoryTrials : public LandscapeTrials {
   public:
    std::optional<std::uint64_t> memory_bytes(const PatternConfig& config) override {
      return largest_rank_memory(config).total();
    }
  } trials;
  trials.step = [](const PatternConfig& config) {
    return 1.0 + 0.2 * std::abs(std::log10(static_cast<double>(config.zero.reduce_bucket_size) / 5e8));
  };
  const PatternConfig start =
      with_knob(config_of(PatternKind::zero3, small_llama(4), 4), "zero_optimization.reduce_bucket_size", "5000000");
  const std::uint64_t limit =
      largest_rank_memory(with_knob(start, "zero_optimization.reduce_bucket_size", "50000000")).total();
  const TuningOutcome outcome = tune_pattern(start, tuning_space(start), trials, {.memory_limit = limit});
  EXPECT_EQ(outcome.best.zero.reduce_bucket_size, 50'000'000u);  // 2e8 and 5e8 would be faster
  std::size_t too_large = 0;
  for (const TuningTrial& trial : outcome.trials) {
    ASSERT_TRUE(trial.memory_bytes) << trial.knob << "=" << trial.value;
    if (trial.verdict == TrialVerdict::too_large) {
      ++too_large;
      EXPECT_GT(*trial.memory_bytes, limit);
      EXPECT_FALSE(trial.measured);
    } else if (trial.verdict != TrialVerdict::start && trial.verdict != TrialVerdict::confirm &&
               trial.knob != "zero_optimization.reduce_bucket_size") {
      EXPECT_LE(*trial.memory_bytes, limit) << trial.knob << "=" << trial.value;
    }
    if (trial.knob == "zero_optimization.reduce_bucket_size" && trial.value == "200000000")
      EXPECT_EQ(trial.verdict, TrialVerdict::too_large);
  }
  EXPECT_GE(too_large, 2u);
  EXPECT_EQ(name_of(TrialVerdict::too_large), "too_large");

  // Settings the job runs now are measured whatever the model says they need.
  MemoryTrials nothing_fits;
  nothing_fits.step = trials.step;
  const TuningOutcome kept = tune_pattern(start, tuning_space(start), nothing_fits, {.memory_limit = 1});
  EXPECT_TRUE(kept.start().measured);
  EXPECT_EQ(nothing_fits.measured, 1);
  EXPECT_EQ(kept.best_settings, kept.start().settings);
  for (std::size_t i = 1; i < kept.trials.size(); ++i) EXPECT_EQ(kept.trials[i].verdict, TrialVerdict::too_large);
}

TEST(TuningSearch, EachTrialIsToldAsItIsDecidedNotAtTheEnd) {
  PatternConfig start = config_of(PatternKind::zero3, small_llama(4), 4);
  start = with_knob(start, "zero_optimization.overlap_comm", "false");
  LandscapeTrials trials;
  trials.step = zero3_landscape;
  const TuningOutcome outcome = tune_pattern(start, tuning_space(start), trials);
  ASSERT_EQ(trials.decisions.size(), outcome.trials.size());
  for (std::size_t i = 0; i < trials.decisions.size(); ++i) {
    const auto& [index, verdict, measured_then] = trials.decisions[i];
    EXPECT_EQ(index, i);
    EXPECT_EQ(verdict, outcome.trials[i].verdict);
    // Told before the next trial ran, so a stop in the next keeps it.
    int measured_so_far = 0;
    for (std::size_t j = 0; j <= i; ++j) measured_so_far += outcome.trials[j].measured.has_value();
    EXPECT_EQ(measured_then, measured_so_far) << "trial " << i;
  }
}

TEST(FittedCostModel, RecoversLatencyAndBandwidthFromAMeasuredStep) {
  const PatternConfig config = config_of(PatternKind::ddp, small_llama(4), 4);
  const RankSchedule schedule = build_schedule(config, 0);
  // Each allreduce took 20 us + bytes at 2 GB/s; the compute took what it took.
  std::vector<ItemTiming> timings;
  double clock = 0;
  for (const ScheduleStep& step : schedule.steps) {
    const double seconds =
        step.kind == StepKind::compute ? 1e-3 : 20e-6 + static_cast<double>(step.bytes) / 2e9;
    timings.push_back({clock, clock + seconds});
    clock += seconds;
  }
  const FittedCostModel fitted(config.layout, schedule, timings);
  const auto line = fitted.lines().at({StepKind::collective, Collective::allreduce, 4});
  EXPECT_NEAR(line.latency_seconds, 20e-6, 1e-9);
  EXPECT_NEAR(line.seconds_per_byte, 1 / 2e9, 1e-15);
  EXPECT_NEAR(fitted.seconds({StepKind::collective, Collective::allreduce, 1 << 20, 4, 1}),
              20e-6 + (1 << 20) / 2e9, 1e-9);
  EXPECT_THROW(fitted.seconds({StepKind::collective, Collective::allgather, 1024, 4, 1}), UsageError);
  // Predicting the schedule it was fitted on: the allreduces now overlap the backward
  // compute they waited behind in this serial timeline, so the step is shorter, never longer.
  double predicted = 0;
  for (const PredictedRank& rank : predict_step(config, fitted).ranks)
    for (const ItemTiming& timing : rank.timings) predicted = std::max(predicted, timing.end_seconds);
  EXPECT_GT(predicted, 0);
  EXPECT_LE(predicted, clock * (1 + 1e-9));
}

}  // namespace
}  // namespace commbench
