#include "commbench/pattern/tuning_search.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <utility>

#include "commbench/core/name_lookup.hpp"

namespace commbench {

std::string_view name_of(TrialVerdict verdict) {
  using Named = detail::NamedValue<TrialVerdict>;
  static constexpr std::array kNames{Named{"start", TrialVerdict::start},        Named{"better", TrialVerdict::better},
                                     Named{"kept", TrialVerdict::kept},          Named{"pruned", TrialVerdict::pruned},
                                     Named{"skipped", TrialVerdict::skipped},    Named{"confirm", TrialVerdict::confirm},
                                     Named{"unchanged", TrialVerdict::unchanged},
                                     Named{"too_large", TrialVerdict::too_large}};
  return detail::name_in<TrialVerdict>(kNames, verdict);
}

namespace {

std::vector<std::pair<std::string, std::string>> settings_of(const PatternConfig& config,
                                                             const std::vector<TuningKnob>& knobs) {
  std::vector<std::pair<std::string, std::string>> settings;
  for (const TuningKnob& knob : knobs) settings.emplace_back(knob.key, knob_value(config, knob.key));
  return settings;
}

// A trial whose verdict is final joins the outcome, and the trials hear of it.
void decide(TuningOutcome& outcome, TuningTrial trial, TuningTrials& trials) {
  outcome.trials.push_back(std::move(trial));
  trials.decided(outcome.trials.size() - 1, outcome.trials.back());
}

// Faster than `best` by more than either trial's noise (and at least kMinimumGain): a
// change that only the jitter of a few steps favours is not taken.
bool clearly_faster(const TrialMeasurement& candidate, const TrialMeasurement& best) {
  const double margin = std::max({kMinimumGain, candidate.noise, best.noise});
  return candidate.step_seconds < best.step_seconds * (1 - margin);
}

// The faster of two measurements of the same settings: another process or a burst of
// interrupts only ever adds time, so the faster run is the one less disturbed.
const TrialMeasurement& faster(const TrialMeasurement& first, const TrialMeasurement& second) {
  return second.step_seconds < first.step_seconds ? second : first;
}

// Whether every run of the best is faster than every run of the start by twice what a
// change needs (the noisiest run's noise, kMinimumGain at least). Then a quiet run of the
// start would have to beat all of its own runs by more than their noise to undo the
// verdict, and the rounds left would only cost time: each is two runs of the step at the
// job's size (on the proof cluster, each as long as a run of the real job).
bool beyond_doubt(const std::vector<TrialMeasurement>& best_runs, const std::vector<TrialMeasurement>& start_runs) {
  double slowest_best = 0, fastest_start = start_runs.front().step_seconds, margin = kMinimumGain;
  for (const TrialMeasurement& run : best_runs) {
    slowest_best = std::max(slowest_best, run.step_seconds);
    margin = std::max(margin, run.noise);
  }
  for (const TrialMeasurement& run : start_runs) {
    fastest_start = std::min(fastest_start, run.step_seconds);
    margin = std::max(margin, run.noise);
  }
  return slowest_best < fastest_start * (1 - 2 * margin);
}

// The best and the start measured again in alternating order, best-start, start-best,
// best-start, ... for up to kConfirmRounds rounds; each side stands by its fastest run and
// the best stands only when that is still clearly faster than the start's. One pair alone
// lets a single burst of other work on the machine decide the recommendation; alternating
// rounds give each side a quiet run. A machine that keeps speeding up gives the start the
// last, fastest run, so drift can only make the search more cautious. A round after which
// the best's runs, its search trial among them, are all faster than the start's beyond
// doubt ends the confirmation. Rounds the budget has no room for are not run; without one
// whole round the trials' figures stand.
void confirm(TuningOutcome& outcome, const PatternConfig& start, const std::vector<TuningKnob>& knobs,
             TuningTrials& trials, const TrialMeasurement& best_in_search) {
  std::optional<TrialMeasurement> best_again, start_again;
  std::vector<TrialMeasurement> best_runs{best_in_search}, start_runs{*outcome.trials.front().measured};
  // Measures one side once more; false when the budget has no room for it.
  const auto measure_again = [&](bool measuring_best) {
    if (!trials.room_for_another()) return false;
    const PatternConfig& config = measuring_best ? outcome.best : start;
    TuningTrial trial;
    trial.value = measuring_best ? "best" : "start";
    trial.settings = settings_of(config, knobs);
    trial.memory_bytes = trials.memory_bytes(config);
    trial.measured = trials.measure(config);
    trial.verdict = TrialVerdict::confirm;
    std::optional<TrialMeasurement>& side = measuring_best ? best_again : start_again;
    side = side ? faster(*side, *trial.measured) : *trial.measured;
    (measuring_best ? best_runs : start_runs).push_back(*trial.measured);
    decide(outcome, std::move(trial), trials);
    return true;
  };
  for (int round = 0; round < kConfirmRounds; ++round) {
    const bool best_first = round % 2 == 0;
    if (!measure_again(best_first) || !measure_again(!best_first)) {
      // Without one whole round nothing was confirmed: the budget ended the search.
      if (round == 0) outcome.budget_exhausted = true;
      break;
    }
    outcome.confirm_rounds = round + 1;
    if (round + 1 < kConfirmRounds && beyond_doubt(best_runs, start_runs)) {
      outcome.ended_beyond_doubt = true;
      break;
    }
  }
  if (!best_again || !start_again) return;
  outcome.confirmed = true;
  outcome.best_step = *best_again;
  outcome.start_step = *start_again;
  if (clearly_faster(*best_again, *start_again)) return;
  outcome.unconfirmed = outcome.best_settings;
  outcome.unconfirmed_step = *best_again;
  outcome.best = start;
  outcome.best_settings = settings_of(start, knobs);
  outcome.best_step = *start_again;
}

}  // namespace

bool predicted_to_save_enough(double candidate, double best, const TuningLimits& limits) {
  const double needed = std::max(kMinimumGain * best, limits.needed_saving_seconds.value_or(0.0));
  return best - candidate >= needed;
}

TuningOutcome tune_pattern(const PatternConfig& start, const std::vector<TuningKnob>& knobs, TuningTrials& trials,
                           const TuningLimits& limits) {
  TuningOutcome outcome;
  outcome.best = start;
  TuningTrial first;
  first.settings = settings_of(start, knobs);
  first.memory_bytes = trials.memory_bytes(start);
  first.measured = trials.measure(start);
  // A model fitted to the start trial can only predict once that trial has run; beside
  // the measured step, its prediction shows how well the fit holds.
  first.predicted_seconds = trials.predict(start);
  first.verdict = TrialVerdict::start;
  decide(outcome, first, trials);
  TrialMeasurement best = *first.measured;
  std::optional<double> best_prediction = first.predicted_seconds;

  for (const TuningKnob& knob : knobs) {
    const std::string own = knob_value(outcome.best, knob.key);
    for (const std::string& value : knob.candidates) {
      if (value == own) continue;
      TuningTrial trial;
      trial.knob = knob.key;
      trial.value = value;
      const PatternConfig config = with_knob(outcome.best, knob.key, value);
      trial.settings = settings_of(config, knobs);
      trial.memory_bytes = trials.memory_bytes(config);
      if (limits.memory_limit && trial.memory_bytes && *trial.memory_bytes > *limits.memory_limit) {
        trial.verdict = TrialVerdict::too_large;
        decide(outcome, std::move(trial), trials);
        continue;
      }
      if (trials.same_step(config, outcome.best)) {
        trial.verdict = TrialVerdict::unchanged;
        decide(outcome, std::move(trial), trials);
        continue;
      }
      trial.predicted_seconds = trials.predict(config);
      if (trial.predicted_seconds && best_prediction &&
          !predicted_to_save_enough(*trial.predicted_seconds, *best_prediction, limits)) {
        trial.verdict = TrialVerdict::pruned;
      } else if (outcome.budget_exhausted || !trials.room_for_another()) {
        outcome.budget_exhausted = true;
        trial.verdict = TrialVerdict::skipped;
      } else {
        trial.measured = trials.measure(config);
        if (clearly_faster(*trial.measured, best)) {
          trial.verdict = TrialVerdict::better;
          outcome.best = config;
          best = *trial.measured;
          best_prediction = trial.predicted_seconds;
        } else {
          trial.verdict = TrialVerdict::kept;
        }
      }
      decide(outcome, std::move(trial), trials);
    }
  }
  outcome.start_step = *first.measured;
  outcome.best_step = best;
  outcome.best_settings = settings_of(outcome.best, knobs);
  if (outcome.best_settings != first.settings) confirm(outcome, start, knobs, trials, best);
  return outcome;
}

}  // namespace commbench
