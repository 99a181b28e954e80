#include "commbench/analysis/pattern_tuning.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include <fmt/format.h>

#include "commbench/backend/typed_exchange.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/core/record.hpp"
#include "commbench/core/text_table.hpp"
#include "commbench/pattern/fitted_cost_model.hpp"
#include "commbench/pattern/pattern_executor.hpp"
#include "commbench/pattern/pattern_groups.hpp"
#include "commbench/core/size.hpp"
#include "commbench/pattern/pattern_measurement.hpp"
#include "commbench/pattern/rank_memory.hpp"
#include "commbench/pattern/schedule_json.hpp"
#include "commbench/pattern/step_prediction.hpp"
#include "commbench/pattern/tuning_search.hpp"
#include "commbench/report/output_file.hpp"
#include "commbench/report/reporter_set.hpp"
#include "commbench/report/scheduler_job.hpp"
#include "commbench/runner/interruption.hpp"

namespace commbench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kTuneSchema = "commbench.patterns-tune/2";

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string ms(double seconds) { return milliseconds_text(seconds * 1e3, 4); }

// A trial's figures: its median step (the slowest rank's), whole, so one step that a
// loaded machine preempted does not decide the search; its noise is the median absolute
// deviation of the steps, relative, as robust to that step as the median is.
TrialMeasurement median_step(std::vector<StepBreakdown> steps) {
  TrialMeasurement result;
  if (steps.empty()) return result;
  std::sort(steps.begin(), steps.end(),
            [](const StepBreakdown& a, const StepBreakdown& b) { return a.step_seconds < b.step_seconds; });
  const StepBreakdown& median = steps[(steps.size() - 1) / 2];
  result.step_seconds = median.step_seconds;
  result.exposed_seconds = median.exposed_seconds;
  result.communication_seconds = median.communication_seconds;
  std::vector<double> deviations;
  for (const StepBreakdown& step : steps) deviations.push_back(std::abs(step.step_seconds - median.step_seconds));
  std::sort(deviations.begin(), deviations.end());
  if (median.step_seconds > 0) result.noise = deviations[(deviations.size() - 1) / 2] / median.step_seconds;
  return result;
}

Record trial_record(std::size_t index, const TuningTrial& trial);

// The trials on the job's backend. Every answer it gives the search is agreed over the
// world (the measurement loop's slowest-rank breakdown, a broadcast prediction, the
// longest clock), so every rank's search takes the same path.
class JobTuningTrials final : public TuningTrials {
 public:
  JobTuningTrials(JobSteps& session, Backend& backend, const TuneRequest& request, const std::string& pattern,
                  const TuningFiles& files)
      : session_(session),
        backend_(backend),
        request_(request),
        pattern_(pattern),
        files_(files),
        started_(Clock::now()) {}

  ~JobTuningTrials() override {
    // Freeing sub-communicators may wait for peers: under the watchdog.
    auto guard = session_.watchdog().guard("releasing the pattern's groups");
    groups_.reset();
  }

  TrialMeasurement measure(const PatternConfig& config) override {
    const Clock::time_point trial_started = Clock::now();
    session_.phases().begin_phase(fmt::format("tuning trial {}", trials_run_ + 1));
    Bootstrap& world = session_.world();
    RankSchedule schedule;
    session_.step("building the schedule", [&] { schedule = build_schedule(config, world.rank()); });
    ensure_groups(config, schedule);
    PatternStepWorkload workload(*groups_, schedule, fmt::format("{} step, trial {}", pattern_, ++trials_run_));
    const PatternMeasurement measured =
        measure_pattern(workload, world, request_.steps, request_.warmup, &session_.watchdog());
    // A trial cut short is no trial to compare: the whole tuning stops (on every rank alike).
    if (measured.interrupted_by != 0) throw Interrupted(measured.interrupted_by);
    if (request_.prune && !fitted_ && world.rank() == 0)
      fitted_ = std::make_unique<FittedCostModel>(config.layout, schedule, workload.last_timings());
    longest_trial_ = std::max(longest_trial_, agreed_max("agreeing on a trial's duration", seconds_since(trial_started)));

    const TrialMeasurement result = median_step(measured.steps);
    if (session_.reporting()) {
      fmt::print("# trial {}: step {} ms, exposed {} ms ({} s of the budget used)\n", trials_run_,
                 ms(result.step_seconds), ms(result.exposed_seconds), significant_text(seconds_since(started_), 3));
      std::fflush(stdout);
    }
    return result;
  }

  // The slowest simulated rank's step under the model fitted on rank 0, broadcast.
  std::optional<double> predict(const PatternConfig& config) override {
    if (!request_.prune) return std::nullopt;
    Bootstrap& world = session_.world();
    auto guard = session_.watchdog().guard("agreeing on a trial's predicted step");
    std::optional<double> predicted;
    if (world.rank() == 0 && fitted_) {
      try {
        double step = 0;
        for (const PredictedRank& rank : predict_step(config, *fitted_).ranks)
          for (const ItemTiming& timing : rank.timings) step = std::max(step, timing.end_seconds);
        if (std::isfinite(step)) predicted = step;
      } catch (const UsageError&) {
        // A kind of communication the start trial did not have: no prediction, measure it.
      }
    }
    return broadcast_as(world, predicted, 0);
  }

  // Every rank computes it alike: a model of the settings, no message.
  std::optional<std::uint64_t> memory_bytes(const PatternConfig& config) override {
    return largest_rank_memory(config).total();
  }

  bool room_for_another() override {
    const double elapsed = agreed_max("agreeing on the tuning budget", seconds_since(started_));
    return elapsed + longest_trial_ <= request_.budget_seconds;
  }

  // Every rank's schedule of each, as --dump-schedule writes them: the same text is the
  // same step. Each rank builds them all, so every rank answers alike without a message.
  bool same_step(const PatternConfig& candidate, const PatternConfig& best) override {
    return every_rank_schedule(candidate) == every_rank_schedule(best);
  }

  void decided(std::size_t index, const TuningTrial& trial) override {
    if (session_.reporting() && files_.add_trial) files_.add_trial(trial_record(index, trial));
  }

  // The search's wall time so far, the slowest rank's.
  double agreed_elapsed() { return agreed_max("agreeing on the search's time", seconds_since(started_)); }

 private:
  // Every agreement waits for all ranks: under the watchdog, so a rank that stalls between
  // trials is named (exit 4) instead of leaving the others waiting in silence.
  double agreed_max(const std::string& what, double value) {
    auto guard = session_.watchdog().guard(what);
    return session_.world().max(value);
  }

  std::string every_rank_schedule(const PatternConfig& config) {
    std::string text;
    for (int rank = 0; rank < session_.world().size(); ++rank)
      text += schedule_json_lines(build_schedule(config, rank), true);
    return text;
  }

  // The groups of the first trial serve every trial whose schedule uses no other role
  // (the knobs regroup bytes, they do not change the layout): splitting a communicator
  // is the slowest set-up step on NCCL.
  void ensure_groups(const PatternConfig& config, const RankSchedule& schedule) {
    bool missing = !groups_;
    if (groups_)
      for (const ScheduleStep& step : schedule.steps)
        if (step.kind != StepKind::compute && !groups_->has(step.group)) missing = true;
    bool any_missing = false;
    {
      auto guard = session_.watchdog().guard("agreeing whether the groups serve a trial");
      any_missing = session_.world().any(missing);
    }
    if (!any_missing) return;
    {
      auto guard = session_.watchdog().guard("releasing the pattern's groups");
      groups_.reset();
    }
    session_.step("splitting the pattern's groups",
                  [&] { groups_ = std::make_unique<PatternGroups>(backend_, config.layout, schedule); });
  }

  JobSteps& session_;
  Backend& backend_;
  const TuneRequest& request_;
  std::string pattern_;
  const TuningFiles& files_;
  Clock::time_point started_;
  std::unique_ptr<PatternGroups> groups_;
  std::unique_ptr<FittedCostModel> fitted_;  // rank 0 only
  double longest_trial_ = 0;
  int trials_run_ = 0;
};

void print_trials(const TuningOutcome& outcome) {
  TextTable table({{{"#"}, Align::right, 3},
                   {{"knob"}, Align::left, std::nullopt, 2},
                   {{"value"}, Align::right, std::nullopt, 2},
                   {{"step ms"}, Align::right, 10},
                   {{"exposed ms"}, Align::right, 11},
                   {{"comm ms"}, Align::right, 10},
                   {{"predicted"}, Align::right, 10},
                   {{"memory"}, Align::right, 9},
                   {{"verdict"}, Align::left, std::nullopt, 2}},
                  "  ", "  ");
  for (std::size_t i = 0; i < outcome.trials.size(); ++i) {
    const TuningTrial& trial = outcome.trials[i];
    const auto measured = [&](double TrialMeasurement::*field) {
      return trial.measured ? ms((*trial.measured).*field) : std::string("-");
    };
    const char* unnamed = trial.verdict == TrialVerdict::confirm ? "(measured again)" : "(your settings)";
    table.add_row({std::to_string(i), trial.knob.empty() ? std::string(unnamed) : trial.knob,
                   trial.value.empty() ? "-" : trial.value, measured(&TrialMeasurement::step_seconds),
                   measured(&TrialMeasurement::exposed_seconds), measured(&TrialMeasurement::communication_seconds),
                   trial.predicted_seconds ? ms(*trial.predicted_seconds) : "-",
                   trial.memory_bytes ? format_size(*trial.memory_bytes) : "-", std::string(name_of(trial.verdict))});
  }
  fmt::print("{}", table.render());
}

std::vector<std::pair<std::string, std::string>> changed_settings(const TuningOutcome& outcome) {
  std::vector<std::pair<std::string, std::string>> changed;
  const auto& start = outcome.start().settings;
  const auto& best = outcome.best_settings;
  for (std::size_t i = 0; i < best.size(); ++i)
    if (best[i].second != start[i].second) changed.push_back(best[i]);
  return changed;
}

// The best's saving set against the job's traced step, where --tune-against gave it.
std::optional<StepProjection> projection_of(const TuningOutcome& outcome, const TuneRequest& request) {
  if (!request.job) return std::nullopt;
  return project_onto_job(*request.job, outcome.start_step, outcome.best_step);
}

bool worth_changing(const TuningOutcome& outcome, const std::optional<StepProjection>& projection) {
  return !changed_settings(outcome).empty() && (!projection || projection->worth_changing());
}

// The recommended settings' memory per rank, part by part, against the start's.
void print_memory(std::optional<std::uint64_t> start_bytes, const PatternConfig& recommended,
                  const TuneRequest& request) {
  const RankMemory memory = largest_rank_memory(recommended);
  std::string parts;
  for (const MemoryPart& part : memory.parts)
    if (part.bytes > 0) parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", part.name, format_size(part.bytes));
  fmt::print("memory per rank (rank {}; model states and the settings' buffers, activations not counted): {}{} ({})\n",
             memory.world_rank, format_size(memory.total()),
             start_bytes && *start_bytes != memory.total() ? fmt::format(" instead of {}", format_size(*start_bytes))
                                                           : std::string(),
             parts);
  if (request.memory_limit_bytes && start_bytes && *start_bytes > *request.memory_limit_bytes)
    fmt::print("# note: your settings need {} per rank, above --memory-limit {}: they were measured all the same, "
               "as the settings the job runs now\n",
               format_size(*start_bytes), format_size(*request.memory_limit_bytes));
}

// What the recommendation's figures rest on.
std::string confirmation_text(const TuningOutcome& outcome) {
  if (!outcome.confirmed) return ", not confirmed: no budget left";
  if (outcome.ended_beyond_doubt)
    return fmt::format(", each the fastest of its runs measured again in {} round{} (of up to {}): every run of the "
                       "best beat every run of the start by over twice the margin",
                       outcome.confirm_rounds, outcome.confirm_rounds == 1 ? "" : "s", kConfirmRounds);
  return ", each the fastest of its runs measured again in alternating rounds";
}

void print_recommendation(const TuningOutcome& outcome, const PatternConfig& best, const TuneRequest& request,
                          double elapsed) {
  const std::optional<StepProjection> projection = projection_of(outcome, request);
  const TrialMeasurement& start = outcome.start_step;
  const TrialMeasurement& tuned = outcome.best_step;
  std::size_t measured = 0, pruned = 0, skipped = 0, too_large = 0;
  for (const TuningTrial& trial : outcome.trials) {
    measured += trial.measured.has_value();
    pruned += trial.verdict == TrialVerdict::pruned;
    skipped += trial.verdict == TrialVerdict::skipped;
    too_large += trial.verdict == TrialVerdict::too_large;
  }
  fmt::print("trials: {} measured, {} pruned by the fitted model, {} skipped for the budget{}; {} s of {} s\n", measured,
             pruned, skipped,
             request.memory_limit_bytes ? fmt::format(", {} over --memory-limit {}", too_large,
                                                      format_size(*request.memory_limit_bytes))
                                        : std::string(),
             significant_text(elapsed, 3), significant_text(request.budget_seconds, 3));
  const auto changed = changed_settings(outcome);
  const bool worth = worth_changing(outcome, projection);
  if (!changed.empty() && !worth) {
    fmt::print("recommendation: keep your settings (against the traced job, below): the modelled step's best was {} ms "
               "instead of {} ms\n",
               ms(tuned.step_seconds), ms(start.step_seconds));
  } else if (changed.empty() && outcome.unconfirmed) {
    fmt::print(
        "recommendation: keep your settings (step {} ms); the search's best was not faster beyond the noise when "
        "measured again ({} ms)\n",
        ms(start.step_seconds), ms(outcome.unconfirmed_step.step_seconds));
  } else if (changed.empty() && measured == 1 && pruned > 0) {
    fmt::print("recommendation: keep your settings (step {} ms); the fitted model predicts no candidate to save what "
               "a change needs\n",
               ms(start.step_seconds));
  } else if (changed.empty()) {
    fmt::print("recommendation: keep your settings (step {} ms); no candidate was faster beyond the noise\n",
               ms(start.step_seconds));
  } else {
    std::string list;
    for (const auto& [key, value] : changed) list += (list.empty() ? "" : ", ") + key + "=" + value;
    fmt::print("recommendation: {}: step {} ms instead of {} ms ({}% faster{}), exposed {} ms instead of {} ms\n", list,
               ms(tuned.step_seconds), ms(start.step_seconds), significant_text(100 * (1 - outcome.speedup()), 3),
               confirmation_text(outcome),
               ms(tuned.exposed_seconds), ms(start.exposed_seconds));
  }
  print_memory(outcome.start().memory_bytes, best, request);
  if (projection)
    fmt::print("against the traced job ({}, {}): {}\n", request.job->source, count_text(request.job->steps, "step"),
               projection_text(*projection, *request.job, worth));
  if (outcome.budget_exhausted)
    fmt::print("# note: the budget (--tune-budget {}) ended the search before every candidate was measured\n",
               significant_text(request.budget_seconds, 3));
  fmt::print("settings ({}):\n{}", tuned_settings_usage(best), tuned_settings_json(best));
  if (!request.output_path.empty()) fmt::print("written to {}\n", request.output_path);
  std::fflush(stdout);
}

// A trial as a record: its knob and value (none for the start and the confirmation), its
// measured figures (none when the search skipped or pruned it), and every knob's value in
// it as its own fields, after the kind's columns.
Record trial_record(std::size_t index, const TuningTrial& trial) {
  const auto measured = [&](double TrialMeasurement::*field) {
    return trial.measured ? FieldValue{(*trial.measured).*field} : FieldValue{};
  };
  const auto named = [](const std::string& text) { return text.empty() ? FieldValue{} : FieldValue{text}; };
  Record record{&record_kind("trial"),
                {whole_value(index), named(trial.knob), named(trial.value), std::string(name_of(trial.verdict)),
                 measured(&TrialMeasurement::step_seconds), measured(&TrialMeasurement::exposed_seconds),
                 measured(&TrialMeasurement::communication_seconds), measured(&TrialMeasurement::noise),
                 optional_value(trial.predicted_seconds),
                 trial.memory_bytes ? whole_value(*trial.memory_bytes) : FieldValue{}},
                {}};
  for (const auto& [key, value] : trial.settings) record.extra.push_back({key, value});
  return record;
}

// The JSON document's own keys after the trials: what was searched, how long, and the
// recommendation.
std::vector<std::pair<std::string, nlohmann::ordered_json>> tuning_sections(const RunContext& context,
                                                                            const TuningOutcome& outcome,
                                                                            const PatternConfig& start_config,
                                                                            const TuneRequest& request,
                                                                            double elapsed) {
  nlohmann::ordered_json pattern = nlohmann::ordered_json::object();
  for (const auto& [key, value] : context.settings) pattern[key] = value;
  // Against the traced job a saving too small to matter keeps the start's settings.
  const std::optional<StepProjection> projection = projection_of(outcome, request);
  const bool keep = projection && !worth_changing(outcome, projection);
  nlohmann::ordered_json recommended = nlohmann::ordered_json::object();
  for (const auto& [key, value] : keep ? outcome.start().settings : outcome.best_settings) recommended[key] = value;
  const PatternConfig& best = keep ? start_config : outcome.best;
  const nlohmann::ordered_json recommendation = {
      {"settings", recommended},
      {"framework_settings", nlohmann::ordered_json::parse(tuned_settings_json(best))},
      {"usage", tuned_settings_usage(best)},
      {"step_seconds", outcome.best_step.step_seconds},
      {"start_step_seconds", outcome.start_step.step_seconds},
      {"speedup", 1 / outcome.speedup()},
      {"confirmed", outcome.confirmed},
      {"confirm_rounds", outcome.confirm_rounds},
      {"ended_beyond_doubt", outcome.ended_beyond_doubt},
      {"memory_bytes", largest_rank_memory(best).total()},
      {"start_memory_bytes", largest_rank_memory(start_config).total()}};
  nlohmann::ordered_json job = nullptr;
  if (projection)
    job = {{"source", request.job->source},
           {"steps", request.job->steps},
           {"ranks_traced", request.job->ranks_traced},
           {"world_size", request.job->world_size},
           {"ranks_short_of_steps", request.job->ranks_short_of_steps},
           {"traced_step_seconds", projection->traced_step_seconds},
           {"exposed_seconds", request.job->exposed_seconds ? nlohmann::ordered_json(*request.job->exposed_seconds)
                                                            : nlohmann::ordered_json()},
           {"saved_seconds", projection->saved_seconds},
           {"share", projection->share},
           {"step_spread_seconds", request.job->step_spread_seconds
                                       ? nlohmann::ordered_json(*request.job->step_spread_seconds)
                                       : nlohmann::ordered_json()},
           {"needed_share", projection->needed_share},
           {"worth_changing", !keep}};
  return {{"pattern", pattern},
          {"budget_seconds", request.budget_seconds},
          {"memory_limit_bytes", request.memory_limit_bytes ? nlohmann::ordered_json(*request.memory_limit_bytes)
                                                            : nlohmann::ordered_json()},
          {"elapsed_seconds", elapsed},
          {"budget_exhausted", outcome.budget_exhausted},
          {"steps_per_trial", request.steps},
          {"warmup_per_trial", request.warmup},
          {"recommendation", recommendation},
          {"job_step", job},
          {"exit_code", 0}};
}

}  // namespace

RunContext tuning_files_context(RunContext context, const PatternConfig& config) {
  context.schema = kTuneSchema;
  context.record_kind = "trial";
  context.settings_in_csv = true;
  context.settings_lead_csv = true;
  for (const TuningKnob& knob : tuning_space(config)) context.extra_columns.push_back(knob.key);
  return context;
}

int run_pattern_tuning(JobSteps& session, Backend& backend, const PatternConfig& config, RunContext context,
                       const TuneRequest& request, const TuningFiles& files) {
  const std::vector<TuningKnob> knobs = tuning_space(config);
  if (session.reporting()) {
    std::size_t candidates = 0;
    for (const TuningKnob& knob : knobs) candidates += knob.candidates.size() - 1;
    fmt::print(
        "# bench-patterns --tune: {}, tp {} x pp {} x dp {}, {} knobs, {} candidates besides your settings; "
        "each trial {} warm-up + {} timed steps; budget {} s\n",
        pattern_name(config), config.layout.tensor, config.layout.pipeline, config.layout.data, knobs.size(),
        candidates, request.warmup, request.steps, significant_text(request.budget_seconds, 3));
    std::fflush(stdout);
  }
  // A signal ends the search on every rank alike (Interrupted, said by the command shell):
  // a trial cut short is no trial to compare.
  std::optional<TuningOutcome> outcome;
  double elapsed = 0;
  {
    JobTuningTrials trials(session, backend, request, pattern_name(config), files);
    TuningLimits limits;
    limits.memory_limit = request.memory_limit_bytes;
    if (request.job) limits.needed_saving_seconds = needed_share_of(*request.job) * request.job->step_seconds;
    outcome = tune_pattern(config, knobs, trials, limits);
    elapsed = trials.agreed_elapsed();
  }
  RunSummary summary;
  summary.rows = outcome->trials.size();
  summary.sections = tuning_sections(context, *outcome, config, request, elapsed);
  if (files.finish) files.finish(summary);
  if (!session.reporting()) return 0;
  fmt::print("{}", slurm_comment_line(context));
  print_trials(*outcome);
  // Against the traced job a saving too small to matter keeps the start's settings.
  const bool keep = request.job && !worth_changing(*outcome, projection_of(*outcome, request));
  const PatternConfig& recommended = keep ? config : outcome->best;
  print_recommendation(*outcome, recommended, request, elapsed);
  for (const std::string& note : context.notes) fmt::print("# note: {}\n", note);
  if (!request.output_path.empty())
    write_file_atomically(request.output_path, tuned_settings_json(recommended), "--tune-output");
  return 0;
}

}  // namespace commbench
