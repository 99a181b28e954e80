// What bench-patterns reports of a step, measured or predicted: the console report and
// the --csv and --json files (a row per collective type and per step; the JSON document
// commbench.patterns/1, docs/patterns.md).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "commbench/backend/compute_standin.hpp"
#include "commbench/pattern/pattern_config.hpp"
#include "commbench/pattern/pattern_measurement.hpp"
#include "commbench/pattern/pattern_report.hpp"
#include "commbench/report/run_context.hpp"

namespace commbench {

struct PatternResultFiles {
  std::string csv_path, json_path;
};

std::optional<PipelineBubble> bubble_of(const PatternConfig& config, const StepBreakdown& step);

// `predicted_by`: the cost model's basis when the step was predicted, not measured.
void print_report(const PatternConfig& config, const PatternMeasurement& measured, const PatternReport& report,
                  const std::vector<std::string>& notes, const std::string& predicted_by = "");

nlohmann::ordered_json step_json(const StepBreakdown& step);
nlohmann::ordered_json type_json(const CommunicationTypeReport& type);

// The CSV: the run's settings as leading columns, then a row per type and per step.
std::string results_csv(const std::vector<std::pair<std::string, std::string>>& settings,
                        const PatternMeasurement& measured, const PatternReport& report);

// Both files of a measured step, each written whole (atomically); complete: false when a
// signal cut the steps short.
void write_pattern_results(const PatternResultFiles& files, const RunContext& context, const PatternMeasurement& measured,
                           const PatternReport& report, const std::optional<PipelineBubble>& bubble,
                           const ComputeCalibration& calibration, int exit_code);

}  // namespace commbench
