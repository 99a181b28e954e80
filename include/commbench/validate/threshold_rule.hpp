// Threshold rules: what a run must achieve to pass, written on the command line
// (--threshold RULE, repeatable) or one per line in a file (--thresholds FILE).
//
//   RULE      := [SELECTOR ':'] METRIC COMPARE VALUE
//   SELECTOR  := [OPS] ['@' SIZES]         OPS: allreduce,allgather,... | all | *
//   SIZES     := SIZE | SIZE.. | ..SIZE | SIZE..SIZE    (the sweep's sizes, K/M/G binary)
//   METRIC    := busbw | algbw | time | efficiency
//   COMPARE   := >= | <= | > | <
//   VALUE     := NUMBER [UNIT] | [FACTOR '*'] REFERENCE
//   UNIT      := GB/s (busbw, algbw) | us (time) | % (efficiency)
//   FACTOR    := NUMBER | NUMBER%
//   REFERENCE := baseline (the same measurement in --baseline) | theoretical | achievable
//
// Examples: "allreduce@64M..:busbw>=300", "busbw>=0.9*baseline", "@1M..:efficiency>=70%",
// "time<=1.2*baseline", "allreduce,reducescatter@1G..:busbw>=0.8*achievable".
// theoretical and achievable are the busbw bounds of the bandwidth model, so only busbw
// is compared with them; efficiency is busbw / theoretical.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "commbench/core/op_case.hpp"

namespace commbench {

enum class ThresholdMetric { busbw, algbw, time, efficiency };
enum class Comparison { at_least, at_most, above, below };  // >=, <=, >, <
enum class Reference { none, baseline, theoretical, achievable };

std::string_view name_of(ThresholdMetric metric);
std::string_view name_of(Comparison comparison);
std::string_view name_of(Reference reference);

struct ThresholdRule {
  std::string text;             // as written, for messages
  std::string origin;           // "--threshold" or "--thresholds FILE line N"
  std::vector<Collective> ops;  // empty: every collective
  std::uint64_t min_bytes = 0;
  std::uint64_t max_bytes = std::numeric_limits<std::uint64_t>::max();
  ThresholdMetric metric = ThresholdMetric::busbw;
  Comparison comparison = Comparison::at_least;
  double value = 0;  // the bound itself, or the factor of `reference`
  Reference reference = Reference::none;

  bool selects(const OpCase& c) const;
  // "'allreduce@64M..:busbw>=300' (--thresholds t.txt line 3)"
  std::string label() const;
};

// 'text', cut short when long: how rules and their parts are quoted in messages.
std::string single_quoted(std::string_view text);

bool satisfies(double measured, Comparison comparison, double bound);

// UsageError "ORIGIN 'TEXT': what is wrong" for anything outside the grammar above.
ThresholdRule parse_threshold_rule(std::string_view text, const std::string& origin);
// A file: one rule per line; blank lines and text after '#' ignored. `origin` is
// "--thresholds PATH"; each rule's origin adds its line. A file without rules is an error.
std::vector<ThresholdRule> parse_threshold_rules(std::string_view text, const std::string& origin);

}  // namespace commbench
