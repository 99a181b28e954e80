// The search behind `bench-patterns --tune`: coordinate descent over a framework's knobs
// (tuning_space.hpp), as an engineer tunes by hand but measured. It starts from the
// user's settings, measures them, then visits each knob in turn and measures the current
// best with that knob at each of its other candidates, keeping a change only when the
// step got faster by more than the trials' own noise. A cost model, when there is one,
// decides which candidates earn a trial: one it predicts not to save what a change needs
// is pruned (a trial costs a run of the step on the cluster, and the model predicts the
// very step a trial would measure); measurement decides every change.
// When the search ends on other settings than the start, both are measured again in
// alternating rounds, and the recommendation rests on those: a machine that warms up or
// drifts over the search makes later trials look better, and one burst of other work can
// make any single trial look worse; the alternating rounds' fastest runs are fooled by
// neither.
//
// The search takes its measurements and its clock through TuningTrials, so that each
// decision depends only on what the trials return: in a job, every rank gets the same
// answers (the measurement loop agrees on them) and so takes the same path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "commbench/pattern/pattern_config.hpp"
#include "commbench/pattern/tuning_space.hpp"

namespace commbench {

struct TrialMeasurement {
  double step_seconds = 0;           // the slowest rank's median step
  double exposed_seconds = 0;        // that step's exposed communication
  double communication_seconds = 0;  // its communication, overlapped or not
  double noise = 0;                  // the steps' median absolute deviation, relative to the median
};

enum class TrialVerdict {
  start,    // the user's settings, measured first
  better,   // faster beyond the noise: the new best
  kept,     // not faster beyond the noise: the best stays
  pruned,   // the cost model predicted it not to save what a change needs: not run
  skipped,  // the budget ran out first: not run
  confirm,  // the start or the best, measured again in the confirmation rounds
  // The best's step call for call (the knob sizes memory or the optimizer's work, which
  // the step does not model): not run, since only noise could tell them apart.
  unchanged,
  too_large,  // needs more memory per rank than --memory-limit: not run
};
std::string_view name_of(TrialVerdict verdict);

struct TuningTrial {
  std::string knob;   // empty for the start
  std::string value;  // the knob's value tried
  std::vector<std::pair<std::string, std::string>> settings;  // every knob's value in this trial
  std::optional<TrialMeasurement> measured;                   // absent when pruned or skipped
  std::optional<double> predicted_seconds;
  std::optional<std::uint64_t> memory_bytes;  // the rank that needs most (pattern/rank_memory.hpp)
  TrialVerdict verdict = TrialVerdict::start;
};

class TuningTrials {
 public:
  virtual ~TuningTrials() = default;
  // Runs the step `config` describes and measures it.
  virtual TrialMeasurement measure(const PatternConfig& config) = 0;
  // The step time a cost model predicts, or nothing when no model can say.
  virtual std::optional<double> predict(const PatternConfig&) { return std::nullopt; }
  // Whether the budget leaves time for one more trial.
  virtual bool room_for_another() = 0;
  // The memory per rank `config` needs, or nothing when no model can say.
  virtual std::optional<std::uint64_t> memory_bytes(const PatternConfig&) { return std::nullopt; }
  // Whether `candidate` runs the very step `best` runs, on every rank.
  virtual bool same_step(const PatternConfig& /*candidate*/, const PatternConfig& /*best*/) { return false; }
  // Each trial once its verdict is final, `index` its place in TuningOutcome::trials: the
  // trials decided so far outlast a stop in a later one.
  virtual void decided(std::size_t /*index*/, const TuningTrial& /*trial*/) {}
};

struct TuningOutcome {
  PatternConfig best;  // the recommendation: the start unless other settings were confirmed faster
  std::vector<std::pair<std::string, std::string>> best_settings;
  std::vector<TuningTrial> trials;  // in the order they were decided
  bool budget_exhausted = false;
  // What the recommendation rests on: each side's fastest confirmation run when a round
  // ran, else the trials.
  TrialMeasurement start_step, best_step;
  bool confirmed = false;
  // Whole confirmation rounds run: 0 without a confirmation, fewer than kConfirmRounds when
  // one left no doubt or the budget cut the rounds short.
  int confirm_rounds = 0;
  bool ended_beyond_doubt = false;  // a round left no doubt, and the rounds after it were not run
  // The search's best before confirmation, when confirmation found it no faster.
  std::optional<std::vector<std::pair<std::string, std::string>>> unconfirmed;
  TrialMeasurement unconfirmed_step;  // its fastest step when measured again

  // best over start step time: below 1 when faster settings were found
  double speedup() const { return best_step.step_seconds / start_step.step_seconds; }
  const TuningTrial& start() const { return trials.front(); }
};

// A change must beat the best by this much at least, however quiet the trials were.
inline constexpr double kMinimumGain = 0.02;
// Rounds of the confirmation (each the best and the start, in alternating order): three
// give each side two chances of a run no other work disturbed, for four trials more than
// a single pair. A round after which every run of the best beats every run of the start
// by twice the margin a change needs ends them.
inline constexpr int kConfirmRounds = 3;

struct TuningLimits {
  // A candidate needing more memory per rank is not run (the start always is: it is what
  // the job runs now).
  std::optional<std::uint64_t> memory_limit;
  // The least a candidate must be predicted to save, in seconds, to earn a trial (the
  // job's step-to-step spread, where the job's trace says it); kMinimumGain of the best's
  // predicted step at least.
  std::optional<double> needed_saving_seconds;
};

// Whether a candidate predicted to take `candidate` seconds could save what a change
// needs, against the best's `best` predicted seconds.
bool predicted_to_save_enough(double candidate, double best, const TuningLimits& limits);

TuningOutcome tune_pattern(const PatternConfig& start, const std::vector<TuningKnob>& knobs, TuningTrials& trials,
                           const TuningLimits& limits = {});

}  // namespace commbench
