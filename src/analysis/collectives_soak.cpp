#include "commbench/analysis/collectives_soak.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "commbench/core/number_text.hpp"
#include "commbench/validate/hostlist.hpp"
#include "commbench/validate/soak_report.hpp"

namespace commbench {

CollectivesSoak::CollectivesSoak(double duration_s, double interval_s, SoakRule rule)
    : duration_s_(duration_s), interval_s_(interval_s), rule_(rule) {}

void CollectivesSoak::add(const OpCase& c, int interval, double start_s, double end_s, ResultRow& row,
                          const std::vector<NodeNic>& nics) {
  if (!enabled()) return;
  row.extra.push_back({"interval", std::int64_t{interval}});
  row.extra.push_back({"interval_start_s", start_s});
  const std::string what = describe(c);
  auto [entry, added] = by_case_.try_emplace(what);
  if (added) order_.push_back(what);
  Series& series = entry->second;
  series.intervals.push_back(interval);
  series.start_s.push_back(start_s);
  series.end_s.push_back(end_s);
  series.busbw.push_back(row.busbw_gbps);
  std::vector<std::string> flagged;
  for (const NodeNic& nic : nics)
    if (nic.rail && !nic.flag.empty())
      flagged.push_back(nic.node + " " + nic_label(nic.traffic.device, nic.traffic.port, nic.traffic.rdma));
  series.flagged.push_back(std::move(flagged));
  intervals_ = std::max(intervals_, interval + 1);
  elapsed_s_ = std::max(elapsed_s_, end_s);
}

// A rail short in more than half of the dip's low readings is named with it.
void CollectivesSoak::name_short_rails(const Series& series, CaseDip& dip) const {
  std::map<std::string, int> counts;
  int readings = 0;
  for (std::size_t i = 0; i < series.intervals.size(); ++i) {
    if (series.intervals[i] < dip.first_interval || series.intervals[i] > dip.last_interval) continue;
    ++readings;
    for (const std::string& rail : series.flagged[i]) ++counts[rail];
  }
  std::set<std::string> nodes;
  for (const auto& [rail, count] : counts)
    if (count * 2 > readings) {
      dip.short_rails.push_back(fmt::format("{} (short in {} of {} intervals)", rail, count, readings));
      nodes.insert(rail.substr(0, rail.find(' ')));
    }
  dip.nodes.assign(nodes.begin(), nodes.end());
}

std::vector<CaseDip> CollectivesSoak::dips() const {
  std::vector<CaseDip> dips;
  for (const std::string& what : order_) {
    const Series& series = by_case_.at(what);
    const SoakLevels levels = soak_levels(series.busbw, rule_);
    const double cadence = soak_cadence(series.start_s);
    for (const Dip& dip : dips_in(series.busbw, levels.low_below_gbps)) {
      // One case's series has one reading per interval, as a node's has: the node's least,
      // counted in time, as a node's is (a case held up for 15 s is one reading).
      double low_time = 0;
      for (std::size_t i = dip.first; i <= dip.last; ++i)
        if (series.busbw[i] < levels.low_below_gbps)
          low_time += reading_weight(series.end_s[i] - series.start_s[i], cadence);
      if (low_time < rule_.least_node_readings) continue;
      CaseDip found;
      found.what = what;
      found.first_interval = series.intervals[dip.first];
      found.last_interval = series.intervals[dip.last];
      found.start_s = series.start_s[dip.first];
      found.end_s = series.end_s[dip.last];
      found.low_readings = dip.low;
      found.lowest_gbps = dip.lowest;
      found.steady_gbps = levels.steady_gbps;
      found.depth = levels.steady_gbps > 0 ? 1 - dip.lowest / levels.steady_gbps : 0;
      found.fails = dip.lowest < rule_.fraction * levels.steady_gbps;
      name_short_rails(series, found);
      dips.push_back(std::move(found));
    }
  }
  std::stable_sort(dips.begin(), dips.end(),
                   [](const CaseDip& a, const CaseDip& b) { return a.first_interval < b.first_interval; });
  return dips;
}

std::string CollectivesSoak::console_text(const std::vector<CaseDip>& dips) const {
  if (!enabled()) return "";
  // An interrupted soak says how long it ran, and that it was cut short.
  const bool cut_short = elapsed_s_ + interval_s_ < duration_s_;
  std::string text = fmt::format(
      "# soak: {} interval{} over {} s{}; {} dip{}\n", intervals_, intervals_ == 1 ? "" : "s",
      significant_text(elapsed_s_, 3),
      cut_short ? fmt::format(" (stopped before the {} s asked for)", significant_text(duration_s_, 6)) : "",
      dips.size(), dips.size() == 1 ? "" : "s");
  std::set<std::string> excluded;
  for (const CaseDip& dip : dips) {
    text += fmt::format(
        "# {} {} from {} s to {} s: {} low intervals, lowest {} GB/s, {} % below its steady {} GB/s{}\n",
        dip.fails ? "FAIL" : "PASS", dip.what, fixed_text(dip.start_s, 1), fixed_text(dip.end_s, 1), dip.low_readings,
        significant_text(dip.lowest_gbps, 3), fixed_text(100 * dip.depth, 0), significant_text(dip.steady_gbps, 3),
        dip.short_rails.empty() ? "; no rail fell short"
                                : "; rails short: " + fmt::format("{}", fmt::join(dip.short_rails, ", ")));
    if (dip.fails) excluded.insert(dip.nodes.begin(), dip.nodes.end());
  }
  if (!excluded.empty())
    text += "--exclude=" + compress_hostlist(std::vector<std::string>(excluded.begin(), excluded.end())) + "\n";
  return text;
}

nlohmann::ordered_json CollectivesSoak::json_section(const std::vector<CaseDip>& dips) const {
  using json = nlohmann::ordered_json;
  json events = json::array();
  for (const CaseDip& dip : dips)
    events.push_back({{"case", dip.what},
                      {"first_interval", dip.first_interval},
                      {"last_interval", dip.last_interval},
                      {"start_s", dip.start_s},
                      {"end_s", dip.end_s},
                      {"low_readings", dip.low_readings},
                      {"lowest_gbps", dip.lowest_gbps},
                      {"steady_gbps", dip.steady_gbps},
                      {"depth", dip.depth},
                      {"result", dip.fails ? "fail" : "pass"},
                      {"short_rails", dip.short_rails},
                      {"nodes", dip.nodes}});
  return {{"started_utc", utc_text(started_unix_, 0)},
          {"duration_s", duration_s_},
          {"interval_s", interval_s_},
          {"intervals", intervals_},
          {"fraction", rule_.fraction},
          {"least_depth", rule_.least_depth},
          {"spread_limit", rule_.spread_limit},
          {"events", events}};
}

}  // namespace commbench
