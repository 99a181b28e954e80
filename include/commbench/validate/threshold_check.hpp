// Applies threshold rules to the rows of a run: decides pass or fail per row, and says
// before anything is measured when a rule cannot apply to this run (it selects nothing,
// its baseline has no counterpart, the bandwidth model has no bound for it), so a
// validation job never "passes" a rule it did not check.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "commbench/core/op_case.hpp"
#include "commbench/core/result_row.hpp"
#include "commbench/validate/baseline.hpp"
#include "commbench/validate/threshold_rule.hpp"

namespace commbench {

// Why the bandwidth model has no `reference` bound for a collective; nullopt when it has.
using MissingBound = std::function<std::optional<std::string>(Collective, Reference)>;

class ThresholdCheck {
 public:
  // UsageError when a rule compares with the baseline but none is given, or a baseline
  // is given that no rule compares with (a baseline alone would check nothing).
  ThresholdCheck(std::vector<ThresholdRule> rules, std::optional<Baseline> baseline);

  bool active() const { return !rules_.empty(); }
  const std::vector<ThresholdRule>& rules() const { return rules_; }

  // Before measuring (UsageError naming the rule): every rule selects at least one case
  // of `plan`; a baseline rule finds at least one of them in the baseline. Returns notes
  // for the run header, e.g. how many selected cases the baseline lacks.
  // The run's `backend` and `nodes` only feed a note when the baseline's differ.
  std::vector<std::string> check_plan(const std::vector<OpCase>& plan, int ranks, const std::string& backend = "",
                                      int nodes = 0) const;
  // Before measuring: a rule on theoretical, achievable or efficiency needs the model's
  // bound for every collective it selects.
  void check_model(const std::vector<OpCase>& plan, const MissingBound& missing) const;

  // Applies every rule that selects the row. Sets row.threshold_passed when at least one
  // rule applied and returns one line per failed rule.
  std::vector<std::string> evaluate(ResultRow& row) const;

 private:
  std::vector<ThresholdRule> rules_;
  std::optional<Baseline> baseline_;
};

}  // namespace commbench
