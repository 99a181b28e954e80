// bench-replay with bench-patterns' model flags: the job's traced step held against the
// step bench-patterns models for the same model, framework and settings, call for call:
// how many calls and bytes of each operation each has, and the first call where the two
// sequences part.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commbench/pattern/schedule.hpp"

namespace commbench {

struct OperationCounts {
  std::string op;
  std::uint64_t job_calls = 0, model_calls = 0;
  std::uint64_t job_bytes = 0, model_bytes = 0;
};

struct ModelComparison {
  std::string model;                        // what was compared with: "zero3 (4 ranks)"
  std::vector<OperationCounts> operations;  // in the order each first appears in the job, then the model
  std::size_t job_calls = 0, model_calls = 0;
  std::size_t same_prefix = 0;                  // calls alike (operation and bytes) from the first
  std::optional<std::string> first_difference;  // none when the sequences are alike
};

// `job`: a rank's traced step (replay_schedule.hpp); `model`: the same rank's modelled
// schedule. Compute steps are passed over.
ModelComparison compare_with_model(const RankSchedule& job, const RankSchedule& model, std::string model_name);

void print_model_comparison(const ModelComparison& comparison);
// The comparison as the JSON document's "model" section.
nlohmann::ordered_json model_comparison_json(const ModelComparison& comparison);

}  // namespace commbench
