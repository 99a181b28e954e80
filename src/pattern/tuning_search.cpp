#include "commbench/pattern/tuning_search.hpp"

#include <algorithm>
#include <array>

namespace commbench {

std::string_view name_of(TrialVerdict verdict) {
  static constexpr std::array<std::string_view, 6> kNames = {"start",  "better",  "kept",
                                                             "pruned", "skipped", "confirm"};
  return kNames[static_cast<std::size_t>(verdict)];
}

namespace {

std::vector<std::pair<std::string, std::string>> settings_of(const PatternConfig& config,
                                                             const std::vector<TuningKnob>& knobs) {
  std::vector<std::pair<std::string, std::string>> settings;
  for (const TuningKnob& knob : knobs) settings.emplace_back(knob.key, knob_value(config, knob.key));
  return settings;
}

// Faster than `best` by more than either trial's noise (and at least kMinimumGain): a
// change that only the jitter of a few steps favours is not taken.
bool clearly_faster(const TrialMeasurement& candidate, const TrialMeasurement& best) {
  const double margin = std::max({kMinimumGain, candidate.noise, best.noise});
  return candidate.step_seconds < best.step_seconds * (1 - margin);
}

// The start and the best measured again back to back; the best stands only when it is
// still clearly faster. Skipped (the trials' figures stand) when the budget has no room.
void confirm(TuningOutcome& outcome, const PatternConfig& start, const std::vector<TuningKnob>& knobs,
             TuningTrials& trials) {
  // The best first: a machine that keeps speeding up then favours the user's settings,
  // so drift can only make the search more cautious.
  std::array<TrialMeasurement, 2> again;  // best, start
  const std::array<const PatternConfig*, 2> configs = {&outcome.best, &start};
  for (std::size_t i = 0; i < 2; ++i) {
    if (!trials.room_for_another()) {
      outcome.budget_exhausted = true;
      return;
    }
    TuningTrial trial;
    trial.value = i == 0 ? "best" : "start";
    trial.settings = settings_of(*configs[i], knobs);
    trial.measured = again[i] = trials.measure(*configs[i]);
    trial.verdict = TrialVerdict::confirm;
    outcome.trials.push_back(std::move(trial));
  }
  outcome.confirmed = true;
  outcome.best_step = again[0];
  outcome.start_step = again[1];
  if (clearly_faster(again[0], again[1])) return;
  outcome.unconfirmed = outcome.best_settings;
  outcome.unconfirmed_step = again[0];
  outcome.best = start;
  outcome.best_settings = settings_of(start, knobs);
  outcome.best_step = again[1];
}

}  // namespace

TuningOutcome tune_pattern(const PatternConfig& start, const std::vector<TuningKnob>& knobs, TuningTrials& trials) {
  TuningOutcome outcome;
  outcome.best = start;
  TuningTrial first;
  first.settings = settings_of(start, knobs);
  first.predicted_seconds = trials.predict(start);
  first.measured = trials.measure(start);
  first.verdict = TrialVerdict::start;
  outcome.trials.push_back(first);
  TrialMeasurement best = *first.measured;
  std::optional<double> best_prediction = first.predicted_seconds;

  for (const TuningKnob& knob : knobs) {
    // A model fitted to the start trial can only predict once that trial has run.
    if (!best_prediction) best_prediction = trials.predict(outcome.best);
    const std::string own = knob_value(outcome.best, knob.key);
    for (const std::string& value : knob.candidates) {
      if (value == own) continue;
      TuningTrial trial;
      trial.knob = knob.key;
      trial.value = value;
      const PatternConfig config = with_knob(outcome.best, knob.key, value);
      trial.settings = settings_of(config, knobs);
      trial.predicted_seconds = trials.predict(config);
      if (trial.predicted_seconds && best_prediction &&
          *trial.predicted_seconds > *best_prediction * kPruneAbovePredictedBest) {
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
      outcome.trials.push_back(std::move(trial));
    }
  }
  outcome.start_step = *first.measured;
  outcome.best_step = best;
  outcome.best_settings = settings_of(outcome.best, knobs);
  if (outcome.best_settings != first.settings) confirm(outcome, start, knobs, trials);
  return outcome;
}

}  // namespace commbench
