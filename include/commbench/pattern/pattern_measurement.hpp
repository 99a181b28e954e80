// A pattern's step measured by the one measurement loop, and the breakdown every rank
// agrees on: the slowest rank's (the one whose mean step took longest), as the loop
// reports the slowest rank's time.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "commbench/backend/bootstrap.hpp"
#include "commbench/pattern/pattern_executor.hpp"
#include "commbench/pattern/step_accounting.hpp"
#include "commbench/runner/measurement.hpp"
#include "commbench/runner/watchdog.hpp"

namespace commbench {

struct PatternMeasurement {
  Measurement loop;                  // wall time per step, as every command's rows report it
  StepBreakdown step;                // the slowest rank's mean over the timed steps
  std::vector<StepBreakdown> steps;  // the slowest rank's timed steps, in order
  int breakdown_rank = 0;            // whose breakdowns these are
  // SIGINT/SIGTERM that stopped the timed steps (0: none). The steps timed before it are
  // kept; `loop` then holds their count and the slowest rank's mean step only.
  int interrupted_by = 0;
};

// Runs `warmup` steps, then exactly `steps` timed ones (collective over `world`, guarded
// by `watchdog` when given). A signal during the timed steps ends them early with the
// steps timed so far (interrupted_by); during warm-up, Interrupted is thrown as the loop
// does. `phases`, when given, hears of the loop's phases (allocation, warm-up...).
PatternMeasurement measure_pattern(PatternStepWorkload& workload, Bootstrap& world, std::uint64_t steps,
                                   std::uint64_t warmup, Watchdog* watchdog, PhaseListener* phases = nullptr);

// Collective: the timed steps of the rank with the longest mean step, on every rank.
std::vector<StepBreakdown> slowest_rank_steps(Bootstrap& world, std::span<const StepBreakdown> mine, int& slowest_rank);

// A breakdown as JSON and back: how it travels between ranks (typed_exchange.hpp).
void to_json(nlohmann::json& json, const StepBreakdown& step);
void from_json(const nlohmann::json& json, StepBreakdown& step);

}  // namespace commbench
