// What bench-patterns reports of a step, measured or predicted: the console report, and
// the records and JSON sections its --csv and --json files are written from (a record per
// collective type and per step; the JSON document commbench.patterns/2, docs/patterns.md).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "commbench/backend/compute_standin.hpp"
#include "commbench/pattern/pattern_config.hpp"
#include "commbench/pattern/pattern_measurement.hpp"
#include "commbench/pattern/pattern_report.hpp"
#include "commbench/core/record.hpp"
#include "commbench/report/run_context.hpp"

namespace commbench {

std::optional<PipelineBubble> bubble_of(const PatternConfig& config, const StepBreakdown& step);

// The header of a measured run, printed before its groups are split: what runs, on how
// many ranks, for how many steps, so a long allocation or warm-up is not silence.
void print_pattern_header(const PatternConfig& config, int ranks, std::uint64_t steps, std::uint64_t warmup);

// `predicted_by`: the cost model's basis when the step was predicted, not measured (its
// header is then the report's first line; a measured run's came at its start).
void print_report(const PatternConfig& config, const PatternMeasurement& measured, const PatternReport& report,
                  const std::vector<std::string>& notes, const std::string& predicted_by = "");

nlohmann::ordered_json step_json(const StepBreakdown& step);
nlohmann::ordered_json settings_json(const std::vector<std::pair<std::string, std::string>>& settings);
nlohmann::ordered_json verdict_json(const PatternReport& report);

// The records of a step (core/record.hpp): a "step" for each timed step, numbered from 0,
// and a "type" for each collective type of the mean step.
Record step_record(std::size_t index, const StepBreakdown& step);
Record type_record(const CommunicationTypeReport& type);
// The run's kinds: the CSV holds types and steps under a `record` column, with the
// settings as trailing columns, so runs and predictions concatenate.
void prepare_pattern_context(RunContext& context);
// Every type, then every step, to `add`.
void add_pattern_records(const std::function<void(const Record&)>& add, const PatternMeasurement& measured,
                         const PatternReport& report);
// A JSON value as one of the document's own keys after the records.
void add_section(RunSummary& summary, const std::string& key, const nlohmann::ordered_json& value);

// The end of a measured run's files: complete: false when a signal cut the steps short.
RunSummary measured_pattern_summary(const RunContext& context, const PatternMeasurement& measured,
                                    const PatternReport& report, const std::optional<PipelineBubble>& bubble,
                                    const ComputeCalibration& calibration, int exit_code);

}  // namespace commbench
