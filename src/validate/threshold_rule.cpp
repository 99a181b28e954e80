#include "commbench/validate/threshold_rule.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "commbench/core/error.hpp"
#include "commbench/core/name_lookup.hpp"
#include "commbench/core/size.hpp"

namespace commbench {

namespace {

// What a rule's text names, each table read both ways: the first name of a value is the
// one printed.
using NamedMetric = detail::NamedValue<ThresholdMetric>;
constexpr std::array kMetricNames{NamedMetric{"busbw", ThresholdMetric::busbw},
                                  NamedMetric{"algbw", ThresholdMetric::algbw},
                                  NamedMetric{"time", ThresholdMetric::time}, NamedMetric{"time_us", ThresholdMetric::time},
                                  NamedMetric{"efficiency", ThresholdMetric::efficiency}};

// Longer symbols first: ">=" is not ">" followed by "=".
using NamedComparison = detail::NamedValue<Comparison>;
constexpr std::array kComparisonNames{
    NamedComparison{">=", Comparison::at_least}, NamedComparison{"<=", Comparison::at_most},
    NamedComparison{">", Comparison::above}, NamedComparison{"<", Comparison::below}};

// Reference::none is a plain number: it has no name.
using NamedReference = detail::NamedValue<Reference>;
constexpr std::array kReferenceNames{NamedReference{"baseline", Reference::baseline},
                                     NamedReference{"theoretical", Reference::theoretical},
                                     NamedReference{"achievable", Reference::achievable}};

}  // namespace

std::string_view name_of(ThresholdMetric metric) { return detail::name_in<ThresholdMetric>(kMetricNames, metric); }

std::string_view name_of(Comparison comparison) {
  return detail::name_in<Comparison>(kComparisonNames, comparison);
}

std::string_view name_of(Reference reference) { return detail::name_in<Reference>(kReferenceNames, reference, ""); }

bool ThresholdRule::selects(const OpCase& c) const {
  const bool op_selected = ops.empty() || std::find(ops.begin(), ops.end(), c.op) != ops.end();
  // The size the sweep asked for: chunked collectives round it to whole elements per
  // rank (64 MiB is 67108800 bytes for float allgather on 24 ranks), and a rule written
  // as @64M.. must still select that row.
  const std::uint64_t size = c.requested_bytes != 0 ? c.requested_bytes : c.shape.bytes;
  return op_selected && size >= min_bytes && size <= max_bytes;
}

std::string single_quoted(std::string_view text) {
  std::string out = "'";  // built by appending: GCC 12 misreads "'" + std::string as overlapping
  out += one_line(excerpt(text));
  out += '\'';
  return out;
}

std::string ThresholdRule::label() const { return single_quoted(text) + " (" + origin + ")"; }

bool satisfies(double measured, Comparison comparison, double bound) {
  switch (comparison) {
    case Comparison::at_least: return measured >= bound;
    case Comparison::at_most: return measured <= bound;
    case Comparison::above: return measured > bound;
    case Comparison::below: return measured < bound;
  }
  return false;
}

namespace {

constexpr const char* kGrammar =
    "a rule reads [OPS][@SIZES]:METRIC>=VALUE, e.g. allreduce@64M..:busbw>=0.9*baseline (see docs/thresholds.md)";

class RuleParser {
 public:
  RuleParser(std::string_view text, const std::string& origin) : origin_(origin) {
    rule_.text = std::string(text);
    rule_.origin = origin;
    // Spaces are allowed anywhere between tokens ("busbw >= 300 GB/s").
    for (char c : text)
      if (c != ' ' && c != '\t') compact_ += c;
  }

  ThresholdRule parse() {
    for (char c : compact_)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) fail("a control character in the rule");
    if (compact_.empty()) fail("empty rule; " + std::string(kGrammar));
    std::string_view condition = compact_;
    const auto colon = condition.find(':');
    if (colon != std::string_view::npos) {
      selector(condition.substr(0, colon));
      condition.remove_prefix(colon + 1);
    }
    this->condition(condition);
    return rule_;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw UsageError(origin_ + " " + single_quoted(rule_.text) + ": " + what);
  }

  // Errors of the shared parsers name what they parsed; they are kept, after the rule.
  template <typename Parse>
  auto nested(Parse parse) const {
    try {
      return parse();
    } catch (const UsageError& e) {
      fail(e.what());
    }
  }

  void selector(std::string_view text) {
    const auto at = text.find('@');
    const std::string_view ops = text.substr(0, at);
    // "all" and "*" leave the list empty (every collective the run has), so that
    // check_plan() does not demand a measurement of each of the seven.
    if (!ops.empty() && ops != "*" && detail::lower_case(ops) != "all")
      rule_.ops = nested([&] { return parse_collective_list(ops, "collective"); });
    if (at == std::string_view::npos) return;
    const std::string_view sizes = text.substr(at + 1);
    const auto dots = sizes.find("..");
    const auto size = [&](std::string_view s) { return nested([&] { return parse_size(s, "size"); }); };
    if (dots == std::string_view::npos) {
      rule_.min_bytes = rule_.max_bytes = size(sizes);
      return;
    }
    const std::string_view low = sizes.substr(0, dots), high = sizes.substr(dots + 2);
    if (low.empty() && high.empty()) fail("'@..' selects no size range; write @LOW.., @..HIGH or @LOW..HIGH");
    if (!low.empty()) rule_.min_bytes = size(low);
    if (!high.empty()) rule_.max_bytes = size(high);
    if (rule_.min_bytes > rule_.max_bytes)
      fail("size range " + format_size(rule_.min_bytes) + ".." + format_size(rule_.max_bytes) + " is empty");
  }

  void condition(std::string_view text) {
    std::size_t name_end = 0;
    while (name_end < text.size() &&
           (std::isalpha(static_cast<unsigned char>(text[name_end])) || text[name_end] == '_'))
      ++name_end;
    const std::string metric = detail::lower_case(text.substr(0, name_end));
    if (const std::optional<ThresholdMetric> named = detail::value_named<ThresholdMetric>(kMetricNames, metric)) {
      rule_.metric = *named;
    } else {
      fail((metric.empty() ? std::string("no metric") : "unknown metric '" + excerpt(metric) + "'") +
           "; expected busbw, algbw, time or efficiency; " + kGrammar);
    }
    text.remove_prefix(name_end);
    comparison(text);
    value(text);
  }

  void comparison(std::string_view& text) {
    for (const auto& [symbol, comparison] : kComparisonNames) {
      if (text.substr(0, symbol.size()) == symbol) {
        rule_.comparison = comparison;
        text.remove_prefix(symbol.size());
        return;
      }
    }
    fail("no comparison after " + std::string(name_of(rule_.metric)) + "; expected >=, <=, > or <");
  }

  // A number as written in a rule: decimal, finite, not negative, optionally with '%'.
  double number(std::string_view text, bool percent_allowed) const {
    double scale = 1;
    if (percent_allowed && !text.empty() && text.back() == '%') {
      text.remove_suffix(1);
      scale = 0.01;
    }
    double value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc{} || end != text.data() + text.size() || !std::isfinite(value))
      fail(single_quoted(text) + " is not a number");
    if (value < 0) fail(single_quoted(text) + " is negative");
    return value * scale;
  }

  std::optional<Reference> reference_named(std::string_view text) const {
    return detail::value_named<Reference>(kReferenceNames, detail::lower_case(text));
  }

  void value(std::string_view text) {
    if (text.empty()) fail("no value after " + std::string(name_of(rule_.comparison)) + "; " + kGrammar);
    const auto star = text.find('*');
    const std::string_view last = star == std::string_view::npos ? text : text.substr(star + 1);
    const std::optional<Reference> reference = reference_named(last);
    if (star != std::string_view::npos && !reference)
      fail(single_quoted(last) + " is not a reference; expected baseline, theoretical or achievable after '*'");
    if (reference) {
      relative_value(*reference, star == std::string_view::npos ? std::string_view{} : text.substr(0, star));
      return;
    }
    absolute_value(text);
  }

  void relative_value(Reference reference, std::string_view factor) {
    if (rule_.metric == ThresholdMetric::efficiency)
      fail("efficiency is already busbw / theoretical; compare it with a number, e.g. efficiency>=0.8");
    if (reference != Reference::baseline && rule_.metric != ThresholdMetric::busbw)
      fail(std::string(name_of(reference)) + " is a busbw bound; compare busbw with it, or " +
           std::string(name_of(rule_.metric)) + " with baseline");
    rule_.reference = reference;
    rule_.value = factor.empty() ? 1.0 : number(factor, true);
  }

  void absolute_value(std::string_view text) {
    switch (rule_.metric) {
      case ThresholdMetric::busbw:
      case ThresholdMetric::algbw:
        refuse_bits(text);
        strip_unit(text, "gb/s");
        rule_.value = number(text, false);
        break;
      case ThresholdMetric::time:
        strip_unit(text, "us");
        rule_.value = number(text, false);
        break;
      case ThresholdMetric::efficiency:
        rule_.value = number(text, true);
        // 80 meant as 80% would silently demand 8000%; a bare number must be a fraction.
        if (text.back() != '%' && rule_.value > 2)
          fail("efficiency is a fraction (0.8) or a percentage (80%), not " + std::string(text));
        break;
    }
  }

  // NIC speeds are quoted in gigabits ("400 Gb/s"); busbw and algbw are gigabytes. A
  // lower-case b taken for a B would make the rule 8 times too strict (or too lax).
  void refuse_bits(std::string_view text) const {
    for (std::string_view bits : {"Gb/s", "gb/s", "Gbit/s", "gbit/s", "Gbps", "gbps"})
      if (text.size() > bits.size() && text.substr(text.size() - bits.size()) == bits)
        fail(single_quoted(bits) + " is gigabits per second; " + std::string(name_of(rule_.metric)) +
             " is in GB/s (gigabytes): divide by 8");
  }

  static void strip_unit(std::string_view& text, std::string_view unit) {
    if (text.size() > unit.size() && detail::lower_case(text.substr(text.size() - unit.size())) == unit)
      text.remove_suffix(unit.size());
  }

  const std::string& origin_;
  std::string compact_;
  ThresholdRule rule_;
};

}  // namespace

ThresholdRule parse_threshold_rule(std::string_view text, const std::string& origin) {
  return RuleParser(text, origin).parse();
}

std::vector<ThresholdRule> parse_threshold_rules(std::string_view text, const std::string& origin) {
  std::vector<ThresholdRule> rules;
  std::size_t line = 0, start = 0;
  while (start < text.size()) {
    ++line;
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view content = text.substr(start, end - start);
    start = end + 1;
    if (content.find('\0') != std::string_view::npos)
      throw UsageError(fmt::format("{} line {}: a NUL byte (not a text file)", origin, line));
    content = content.substr(0, content.find('#'));
    if (!content.empty() && content.back() == '\r') content.remove_suffix(1);
    if (content.find_first_not_of(" \t") == std::string_view::npos) continue;
    rules.push_back(parse_threshold_rule(content, fmt::format("{} line {}", origin, line)));
  }
  if (rules.empty()) throw UsageError(origin + ": no rules (only blank lines and comments)");
  return rules;
}

}  // namespace commbench
