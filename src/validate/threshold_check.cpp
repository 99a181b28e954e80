#include "commbench/validate/threshold_check.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "commbench/core/error.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/core/size.hpp"

namespace commbench {
namespace {

// "250.1 GB/s", "12.5 us", "81.2%"
std::string quantity(ThresholdMetric metric, double value) {
  switch (metric) {
    case ThresholdMetric::busbw:
    case ThresholdMetric::algbw: return significant_text(value) + " GB/s";
    case ThresholdMetric::time: return significant_text(value) + " us";
    case ThresholdMetric::efficiency: return significant_text(value * 100.0) + "%";
  }
  return significant_text(value);
}

double baseline_value(ThresholdMetric metric, const BaselineRow& row) {
  switch (metric) {
    case ThresholdMetric::busbw: return row.busbw_gbps;
    case ThresholdMetric::algbw: return row.algbw_gbps;
    case ThresholdMetric::time: return row.time_us;
    case ThresholdMetric::efficiency: break;  // refused by the parser
  }
  return 0;
}

bool needs_model(const ThresholdRule& rule) {
  return rule.metric == ThresholdMetric::efficiency || rule.reference == Reference::theoretical ||
         rule.reference == Reference::achievable;
}

std::string plan_extent(const std::vector<OpCase>& plan) {
  std::vector<Collective> ops;
  std::uint64_t low = plan.front().shape.bytes, high = low;
  for (const OpCase& c : plan) {
    if (std::find(ops.begin(), ops.end(), c.op) == ops.end()) ops.push_back(c.op);
    low = std::min(low, c.shape.bytes);
    high = std::max(high, c.shape.bytes);
  }
  std::string text;
  for (Collective op : ops) {
    if (!text.empty()) text += ',';
    text += name_of(op);
  }
  return text + " from " + format_size(low) + " to " + format_size(high);
}

}  // namespace

ThresholdCheck::ThresholdCheck(std::vector<ThresholdRule> rules, std::optional<Baseline> baseline)
    : rules_(std::move(rules)), baseline_(std::move(baseline)) {
  bool uses_baseline = false;
  for (const ThresholdRule& rule : rules_) {
    if (rule.reference != Reference::baseline) continue;
    uses_baseline = true;
    if (!baseline_)
      throw UsageError(rule.origin + " " + single_quoted(rule.text) +
                       ": compares with the baseline, but no --baseline was given");
  }
  if (baseline_ && !uses_baseline)
    throw UsageError(baseline_->origin +
                     ": no threshold rule compares with it; add one, e.g. --threshold 'busbw>=0.9*baseline'");
}

std::vector<std::string> ThresholdCheck::check_plan(const std::vector<OpCase>& plan, int ranks,
                                                    const std::string& backend, int nodes) const {
  std::vector<std::string> notes;
  if (plan.empty()) return notes;
  const BaselineRow* unlike = nullptr;  // a compared baseline row of another backend or node count
  for (const ThresholdRule& rule : rules_) {
    std::size_t selected = 0, in_baseline = 0;
    const OpCase* first_missing = nullptr;
    for (const OpCase& c : plan) {
      if (!rule.selects(c)) continue;
      ++selected;
      if (rule.reference != Reference::baseline) continue;
      if (const BaselineRow* base = baseline_->find(key_of(c, ranks))) {
        ++in_baseline;
        const bool other_backend = !backend.empty() && !base->backend.empty() && base->backend != backend;
        const bool other_nodes = nodes > 0 && base->nodes > 0 && base->nodes != nodes;
        if (unlike == nullptr && (other_backend || other_nodes)) unlike = base;
      } else if (first_missing == nullptr) {
        first_missing = &c;
      }
    }
    if (selected == 0)
      throw UsageError(rule.origin + " " + single_quoted(rule.text) + ": selects none of this run's measurements (" +
                       plan_extent(plan) + ")");
    // A rule that names collectives must find each of them: "allreduce,allgather:..."
    // on a run without allgather would otherwise check half of what it says.
    for (Collective op : rule.ops) {
      const bool found =
          std::any_of(plan.begin(), plan.end(), [&](const OpCase& c) { return c.op == op && rule.selects(c); });
      if (!found)
        throw UsageError(rule.origin + " " + single_quoted(rule.text) + ": selects no " + std::string(name_of(op)) +
                         " measurement of this run (" + plan_extent(plan) + ")");
    }
    if (rule.reference != Reference::baseline) continue;
    if (in_baseline == 0) {
      std::vector<int> counts;
      for (const auto& [key, row] : baseline_->rows)
        if (std::find(counts.begin(), counts.end(), key.ranks) == counts.end()) counts.push_back(key.ranks);
      std::sort(counts.begin(), counts.end());
      std::string ranks_there;
      for (int n : counts) {
        ranks_there += ranks_there.empty() ? " " : ", ";
        ranks_there += std::to_string(n);
      }
      throw UsageError(rule.origin + " " + single_quoted(rule.text) + ": " + baseline_->origin +
                       " has none of the measurements it selects, e.g. " + describe(key_of(*first_missing, ranks)) +
                       " (the baseline has rows for" + ranks_there + " ranks)");
    }
    if (first_missing != nullptr)
      notes.push_back(fmt::format(
          "threshold {}: {} of {} selected measurements have no row in {} and are not compared, e.g. {}", rule.label(),
          selected - in_baseline, selected, baseline_->origin, describe(key_of(*first_missing, ranks))));
  }
  if (unlike != nullptr)
    notes.push_back(fmt::format(
        "{} line {} was measured with the {} backend on {} node(s); this run uses {} on {}: the comparison is not "
        "like with like",
        baseline_->origin, unlike->line, unlike->backend, unlike->nodes, backend, nodes));
  return notes;
}

void ThresholdCheck::check_model(const std::vector<OpCase>& plan, const MissingBound& missing) const {
  for (const ThresholdRule& rule : rules_) {
    if (!needs_model(rule)) continue;
    const Reference reference = rule.reference == Reference::none ? Reference::theoretical : rule.reference;
    std::vector<Collective> asked;
    for (const OpCase& c : plan) {
      if (!rule.selects(c) || std::find(asked.begin(), asked.end(), c.op) != asked.end()) continue;
      asked.push_back(c.op);
      if (const auto why = missing(c.op, reference))
        throw UsageError(rule.origin + " " + single_quoted(rule.text) + ": the bandwidth model has no " +
                         std::string(name_of(reference)) + " busbw for " + std::string(name_of(c.op)) + " here (" +
                         *why + "); judge it by a figure (busbw>=20) or a good run (busbw>=0.9*baseline, --baseline)");
    }
  }
}

std::vector<std::string> ThresholdCheck::evaluate(ResultRow& row) const {
  std::vector<std::string> failures;
  bool applied = false;
  const MeasurementKey key = key_of(row.op_case, row.ranks);
  for (const ThresholdRule& rule : rules_) {
    if (!rule.selects(row.op_case)) continue;
    std::optional<double> measured;
    switch (rule.metric) {
      case ThresholdMetric::busbw: measured = row.busbw_gbps; break;
      case ThresholdMetric::algbw: measured = row.algbw_gbps; break;
      case ThresholdMetric::time: measured = row.time_us; break;
      case ThresholdMetric::efficiency: measured = row.efficiency; break;
    }
    std::optional<double> reference_value;
    std::string reference_text;
    switch (rule.reference) {
      case Reference::none: reference_value = 1.0; break;
      case Reference::baseline: {
        const BaselineRow* base = baseline_->find(key);
        if (base == nullptr) continue;  // noted before the run (check_plan)
        reference_value = baseline_value(rule.metric, *base);
        reference_text = fmt::format(" = {} x baseline {} (line {})", significant_text(rule.value),
                                     quantity(rule.metric, *reference_value), base->line);
        break;
      }
      case Reference::theoretical: reference_value = row.theoretical_busbw_gbps; break;
      case Reference::achievable: reference_value = row.achievable_busbw_gbps; break;
    }
    if (rule.reference == Reference::theoretical || rule.reference == Reference::achievable) {
      if (reference_value)
        reference_text = " = " + significant_text(rule.value) + " x " + std::string(name_of(rule.reference)) + " " +
                         quantity(rule.metric, *reference_value);
    }
    applied = true;
    const std::string subject = describe(key) + ": " + std::string(name_of(rule.metric)) + " ";
    const std::string rule_text = "; rule " + rule.label();
    if (!measured || !reference_value) {
      failures.push_back(subject + "cannot be checked, the bandwidth model has no bound" + rule_text);
      continue;
    }
    const double bound = rule.value * *reference_value;
    if (satisfies(*measured, rule.comparison, bound)) continue;
    failures.push_back(subject + quantity(rule.metric, *measured) + ", needs " + std::string(name_of(rule.comparison)) +
                       " " + quantity(rule.metric, bound) + reference_text + rule_text);
  }
  if (applied) row.threshold_passed = failures.empty();
  return failures;
}

}  // namespace commbench
