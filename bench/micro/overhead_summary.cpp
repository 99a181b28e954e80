#include "overhead_summary.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <numeric>
#include <sstream>

namespace commbench::micro {
namespace {

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  if (values.size() % 2 == 1) return values[middle];
  return (values[middle - 1] + values[middle]) / 2;
}

// The value below which `fraction` of the values lie (nearest rank).
double quantile(std::vector<double> values, double fraction) {
  std::sort(values.begin(), values.end());
  const auto index = static_cast<std::size_t>(fraction * static_cast<double>(values.size() - 1) + 0.5);
  return values[index];
}

std::string percent(double fraction) {
  std::ostringstream text;
  text << std::showpos << std::fixed << std::setprecision(2) << fraction * 100 << " %";
  return text.str();
}

std::string microseconds(double seconds) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(seconds < 1e-3 ? 3 : 1) << seconds * 1e6 << " us";
  return text.str();
}

std::string per_round_range(const std::vector<double>& overheads) {
  if (overheads.empty()) return "no paired rounds";
  const auto [low, high] = std::minmax_element(overheads.begin(), overheads.end());
  return "single rounds " + percent(*low) + " .. " + percent(*high);
}

std::string verdict(double overhead, double max_overhead) {
  std::ostringstream text;
  text << "target <= " << max_overhead * 100 << " %: " << (overhead <= max_overhead ? "MET" : "NOT MET");
  return text.str();
}

}  // namespace

BatchTimes OverheadSummary::record(const std::string& size_label, Variant variant, int round,
                                   std::span<const double> seconds_per_op) {
  BatchTimes times;
  if (!seconds_per_op.empty()) {
    times.mean =
        std::accumulate(seconds_per_op.begin(), seconds_per_op.end(), 0.0) / static_cast<double>(seconds_per_op.size());
    times.median = median(std::vector<double>(seconds_per_op.begin(), seconds_per_op.end()));
  }
  entries_.push_back({size_label, variant, round, times});
  return times;
}

double OverheadSummary::record_alternating(const std::string& size_label, Variant candidate,
                                           bool candidate_allocated_first, std::span<const double> bare_seconds,
                                           std::span<const double> candidate_seconds) {
  std::vector<double> overheads;
  for (std::size_t i = 0; i < bare_seconds.size() && i < candidate_seconds.size(); ++i)
    overheads.push_back(candidate_seconds[i] / bare_seconds[i] - 1);
  auto set = std::find_if(pair_sets_.begin(), pair_sets_.end(), [&](const PairSet& s) {
    return s.size_label == size_label && s.candidate == candidate &&
           s.candidate_allocated_first == candidate_allocated_first;
  });
  if (set == pair_sets_.end())
    set = pair_sets_.insert(pair_sets_.end(), PairSet{size_label, candidate, candidate_allocated_first, {}});
  set->overheads.insert(set->overheads.end(), overheads.begin(), overheads.end());
  return median(overheads);
}

std::vector<double> OverheadSummary::rounds_of(const std::string& size_label, Variant variant,
                                               Statistic statistic) const {
  std::vector<double> found;
  for (const Entry& e : entries_)
    if (e.size_label == size_label && e.variant == variant) found.push_back(e.times.*statistic);
  return found;
}

double OverheadSummary::overhead(const std::string& size_label, Variant variant, Statistic statistic) const {
  return median(rounds_of(size_label, variant, statistic)) / median(rounds_of(size_label, Variant::bare, statistic)) -
         1;
}

std::vector<double> OverheadSummary::paired_overheads(const std::string& size_label, Variant variant) const {
  std::vector<double> overheads;
  for (const Entry& measured : entries_) {
    if (measured.size_label != size_label || measured.variant != variant) continue;
    for (const Entry& bare : entries_)
      if (bare.size_label == size_label && bare.variant == Variant::bare && bare.round == measured.round)
        overheads.push_back(measured.times.mean / bare.times.mean - 1);
  }
  return overheads;
}

const std::vector<double>* OverheadSummary::pairs(const std::string& size_label, Variant candidate,
                                                  bool allocated_first) const {
  for (const PairSet& s : pair_sets_)
    if (s.size_label == size_label && s.candidate == candidate && s.candidate_allocated_first == allocated_first)
      return &s.overheads;
  return nullptr;
}

void OverheadSummary::print_separate(std::ostream& out, const OverheadTarget& target) const {
  const std::string& size = target.size_label;
  const std::vector<double> bare = rounds_of(size, Variant::bare, &BatchTimes::mean);
  const std::vector<double> harness = rounds_of(size, Variant::harness, &BatchTimes::mean);
  if (bare.empty() || harness.empty()) return;
  const double headline = overhead(size, Variant::harness, &BatchTimes::mean);
  out << "separate " << size << ": bare " << microseconds(median(bare)) << "/op, harness "
      << microseconds(median(harness)) << "/op, " << harness.size() << " rounds -> " << percent(headline)
      << " (median batch " << percent(overhead(size, Variant::harness, &BatchTimes::median)) << "; "
      << per_round_range(paired_overheads(size, Variant::harness)) << "), " << verdict(headline, target.max_overhead)
      << "\n";

  const std::vector<double> reported = rounds_of(size, Variant::runner_reported, &BatchTimes::mean);
  if (reported.empty()) return;
  out << "  runner-reported " << size << ": " << microseconds(median(reported)) << "/op -> "
      << percent(overhead(size, Variant::runner_reported, &BatchTimes::mean)) << " vs bare (median batch "
      << percent(overhead(size, Variant::runner_reported, &BatchTimes::median)) << "; "
      << per_round_range(paired_overheads(size, Variant::runner_reported)) << "), informational\n";
}

void OverheadSummary::print_alternating(std::ostream& out, const OverheadTarget& target, Variant candidate) const {
  const std::string& size = target.size_label;
  const std::vector<double>* first = pairs(size, candidate, true);
  const std::vector<double>* second = pairs(size, candidate, false);
  if (first == nullptr && second == nullptr) return;
  std::vector<double> pooled;
  if (first != nullptr) pooled.insert(pooled.end(), first->begin(), first->end());
  if (second != nullptr) pooled.insert(pooled.end(), second->begin(), second->end());

  // Geometric mean of the two allocation orders' medians: a bias that favours the
  // later-allocated buffers multiplies one by (1 + b) and the other by 1 / (1 + b).
  double estimate = 0;
  std::string how;
  if (first != nullptr && second != nullptr) {
    estimate = std::sqrt((1 + median(*first)) * (1 + median(*second))) - 1;
    how = "balanced: allocated first " + percent(median(*first)) + ", second " + percent(median(*second));
  } else {
    estimate = median(pooled);
    how = std::string("NOT balanced: only allocated ") + (first != nullptr ? "first" : "second");
  }
  const bool control = candidate == Variant::bare;
  out << "alternating " << size << (control ? " bare vs bare (control)" : " harness vs bare") << ": "
      << percent(estimate) << " (" << how << "; " << pooled.size() << " pairs, quartiles "
      << percent(quantile(pooled, 0.25)) << " .. " << percent(quantile(pooled, 0.75)) << ")"
      << (control ? ", expected 0: the method's own bias" : ", " + verdict(estimate, target.max_overhead)) << "\n";
}

void OverheadSummary::print(std::ostream& out, std::span<const OverheadTarget> targets, int ranks) const {
  out << "\nharness overhead = harness time per op / bare time per op - 1; allreduce float sum out-of-place, " << ranks
      << " ranks, every batch timed on its slowest rank\n"
      << "separate: median over rounds of each benchmark's mean (Google Benchmark's Time); "
         "\"median batch\" uses each benchmark's median batch instead\n"
      << "alternating: median over back-to-back batch pairs\n";
  for (const OverheadTarget& target : targets) print_separate(out, target);
  for (const OverheadTarget& target : targets) {
    print_alternating(out, target, Variant::harness);
    print_alternating(out, target, Variant::bare);
  }
}

}  // namespace commbench::micro
