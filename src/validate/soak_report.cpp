#include "commbench/validate/soak_report.hpp"

#include <cmath>
#include <ctime>
#include <set>

#include <fmt/format.h>

#include "commbench/core/interrupted.hpp"
#include "commbench/core/number_text.hpp"

namespace commbench {
namespace {

const std::string& name_at(const SoakOutcome& outcome, int node) {
  return outcome.node_names[static_cast<std::size_t>(node)];
}

std::string subject_of(const SoakOutcome& outcome, const SoakEvent& event) {
  if (event.kind == FaultKind::node) return "node " + name_at(outcome, event.nodes[0]);
  return "link " + name_at(outcome, event.nodes[0]) + " - " + name_at(outcome, event.nodes[1]);
}

std::string joined(const std::vector<std::string>& parts, const char* separator) {
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : separator) + part;
  return text;
}

std::string partners_text(const SoakOutcome& outcome, const SoakEvent& event) {
  std::vector<std::string> names;
  for (int partner : event.partners) names.push_back(name_at(outcome, partner));
  return joined(names, ",");
}

std::string event_line(const SoakOutcome& outcome, const SoakEvent& event, double started_unix) {
  std::string line =
      fmt::format("{} {} from {} s to {} s ({} to {}): {} low reading{}{}, lowest {} GB/s, {} % below the steady level",
                  event.fails ? "FAIL" : "PASS", subject_of(outcome, event), fixed_text(event.start_s, 1),
                  fixed_text(event.end_s, 1), utc_text(started_unix, event.start_s),
                  utc_text(started_unix, event.end_s), event.low_readings, event.low_readings == 1 ? "" : "s",
                  event.partners.empty() ? "" : " with " + partners_text(outcome, event),
                  significant_text(event.lowest_gbps, 3), fixed_text(100 * event.depth, 0));
  line += event.changes.empty() ? "; no counter changed" : "; changed: " + joined(event.changes, "; ");
  return line;
}

// Counter changes on nodes no event covers at the time: worth knowing before they cost
// bandwidth (symbol errors climbing on a link that still carries its share).
std::vector<std::string> unexplained_changes(const SoakOutcome& outcome) {
  std::vector<std::string> lines;
  for (const SoakChange& change : outcome.changes) {
    bool covered = false;
    for (const SoakEvent& event : outcome.events)
      for (int node : event.nodes)
        covered = covered || (node == change.node && change.interval >= event.first_interval - 1 &&
                              change.interval <= event.last_interval + 1);
    if (!covered)
      lines.push_back(
          fmt::format("{} in interval {}: {}", name_at(outcome, change.node), change.interval, change.what));
  }
  return lines;
}

}  // namespace

std::string utc_text(double started_unix, double seconds) {
  const double when = started_unix + seconds;
  const auto whole = static_cast<std::time_t>(std::floor(when));
  std::tm parts{};
  gmtime_r(&whole, &parts);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &parts);
  const int tenths = std::min(9, static_cast<int>((when - std::floor(when)) * 10));
  return fmt::format("{}.{}Z", text, tenths);
}

std::vector<std::string> soak_node_verdicts(const SoakOutcome& outcome) {
  std::vector<std::string> verdicts(outcome.node_names.size());
  for (const SoakEvent& event : outcome.events) {
    if (!event.fails) continue;
    const std::string when = fmt::format("from {} s to {} s (lowest {} GB/s)", fixed_text(event.start_s, 1),
                                         fixed_text(event.end_s, 1), significant_text(event.lowest_gbps, 3));
    if (event.kind == FaultKind::node) {
      std::string& verdict = verdicts[static_cast<std::size_t>(event.nodes[0])];
      verdict += (verdict.empty() ? "" : "; ") + fmt::format("dipped with {} partners {}", event.partners.size(), when);
      continue;
    }
    for (int end : event.nodes) {
      const int other = end == event.nodes[0] ? event.nodes[1] : event.nodes[0];
      std::string& verdict = verdicts[static_cast<std::size_t>(end)];
      verdict += (verdict.empty() ? "" : "; ") + fmt::format("link to {} dipped {}", name_at(outcome, other), when);
    }
  }
  for (std::string& verdict : verdicts)
    if (verdict.empty()) verdict = "ok";
  return verdicts;
}

std::string soak_summary(const SoakOutcome& outcome, const SoakSettings& settings, double started_unix,
                         std::size_t node_lines) {
  std::string text =
      fmt::format("soak: {}, {} in {} s (one pair round each, at least {} s apart; {} every pair), {}\n",
                  count_text(outcome.node_names.size(), "node"), count_text(outcome.intervals, "interval"),
                  fixed_text(outcome.elapsed_seconds, 1), significant_text(settings.interval_s, 3),
                  count_text(outcome.schedule_rounds, "round") + (outcome.schedule_rounds == 1 ? " meets" : " meet"),
                  count_text(outcome.readings.size(), "pair reading"));
  const SoakLevels& levels = outcome.levels;
  text += fmt::format(
      "steady level {} GB/s ({}), spread {} %: a reading below {} GB/s is low; an event fails below {} GB/s "
      "({} of the level)\n",
      significant_text(levels.steady_gbps, 3), levels.given ? "from --expect" : "the median of the run",
      fixed_text(100 * levels.spread, 1), significant_text(levels.low_below_gbps, 3),
      significant_text(settings.rule.fraction * levels.steady_gbps, 3), significant_text(settings.rule.fraction, 3));
  int failing = 0;
  for (const SoakEvent& event : outcome.events) failing += event.fails ? 1 : 0;
  text += fmt::format("events: {} ({} failing)\n", outcome.events.size(), failing);
  for (const SoakEvent& event : outcome.events) text += event_line(outcome, event, started_unix) + "\n";
  for (const std::string& line : unexplained_changes(outcome)) text += "changed without a dip: " + line + "\n";
  if (outcome.interrupted_by != 0)
    text += fmt::format("INCOMPLETE: interrupted by {} after {} s\n", interruption_signal_name(outcome.interrupted_by),
                        fixed_text(outcome.elapsed_seconds, 1));
  const std::vector<std::string> verdicts = soak_node_verdicts(outcome);
  if (verdicts.size() <= node_lines)
    for (std::size_t node = 0; node < verdicts.size(); ++node)
      text += fmt::format("  {}: {}\n", outcome.node_names[node], verdicts[node]);
  text += fmt::format("verdict: {}\n", failing > 0 ? "FAIL" : "ok");
  const std::string exclude = outcome.exclude_line();
  if (!exclude.empty()) text += exclude + "\n";
  return text;
}

std::vector<Record> soak_interval_records(const SoakInterval& interval, const std::vector<std::string>& node_names) {
  const RecordKind& kind = record_kind("interval");
  const auto name = [&](int node) { return node_names[static_cast<std::size_t>(node)]; };
  std::vector<Record> records;
  const auto add = [&](const char* what, const std::string& node_a, const std::string& node_b, const std::string& nic,
                       FieldValue gbps, FieldValue bytes, FieldValue peak, const std::string& detail) {
    records.push_back(Record{&kind,
                             {std::string(what), std::int64_t{interval.index}, interval.start_s, interval.end_s, node_a,
                              node_b, nic, std::move(gbps), std::move(bytes), std::move(peak), detail},
                             {}});
  };
  for (const SoakReading& reading : interval.readings)
    add("pair", name(reading.first), name(reading.second), "", reading.gbps, {}, {}, "");
  for (const NicReading& nic : interval.nics) {
    const bool rated = nic.bytes && nic.seconds > 0;
    add("nic", name(nic.node), "", nic.nic,
        rated ? FieldValue{static_cast<double>(*nic.bytes) / nic.seconds / 1e9} : FieldValue{},
        nic.bytes ? whole_value(*nic.bytes) : FieldValue{},
        nic.peak_gbps > 0 ? FieldValue{nic.peak_gbps} : FieldValue{}, "");
  }
  for (const SoakChange& change : interval.changes) add("change", name(change.node), "", "", {}, {}, {}, change.what);
  return records;
}

std::vector<Record> soak_event_records(const SoakOutcome& outcome, double started_unix) {
  const RecordKind& kind = record_kind("event");
  std::vector<Record> records;
  for (const SoakEvent& event : outcome.events)
    records.push_back(
        Record{&kind,
               {std::string(name_of(event.kind)), name_at(outcome, event.nodes[0]),
                event.nodes.size() > 1 ? name_at(outcome, event.nodes[1]) : std::string(), event.start_s, event.end_s,
                utc_text(started_unix, event.start_s), utc_text(started_unix, event.end_s),
                std::int64_t{event.low_readings}, event.lowest_gbps, outcome.levels.steady_gbps, event.depth,
                std::string(event.fails ? "fail" : "pass"), partners_text(outcome, event), joined(event.changes, "; ")},
               {}});
  return records;
}

nlohmann::ordered_json soak_json(const SoakOutcome& outcome, const SoakSettings& settings, double started_unix) {
  using json = nlohmann::ordered_json;
  json doc;
  doc["soak"] = {{"started_utc", utc_text(started_unix, 0)},
                 {"duration_s", settings.duration_s},
                 {"interval_s", settings.interval_s},
                 {"intervals", outcome.intervals},
                 {"schedule_rounds", outcome.schedule_rounds},
                 {"elapsed_s", outcome.elapsed_seconds},
                 {"steady_gbps", outcome.levels.steady_gbps},
                 {"steady_given", outcome.levels.given},
                 {"spread", outcome.levels.spread},
                 {"low_below_gbps", outcome.levels.low_below_gbps},
                 {"fraction", settings.rule.fraction},
                 {"least_depth", settings.rule.least_depth},
                 {"spread_limit", settings.rule.spread_limit},
                 {"seed", settings.seed}};
  const std::vector<std::string> verdicts = soak_node_verdicts(outcome);
  json nodes = json::array();
  for (std::size_t node = 0; node < verdicts.size(); ++node)
    nodes.push_back({{"host", outcome.node_names[node]},
                     {"verdict", verdicts[node] == "ok" ? "ok" : "fail"},
                     {"reason", verdicts[node] == "ok" ? "" : verdicts[node]}});
  doc["nodes"] = nodes;
  json excluded = json::array();
  for (int node : outcome.excluded_nodes()) excluded.push_back(name_at(outcome, node));
  doc["excluded"] = excluded;
  doc["exclude_option"] = outcome.exclude_line();
  doc["complete"] = outcome.complete;
  doc["exit_code"] = soak_exit_code(outcome);
  doc["interrupted_by"] =
      outcome.interrupted_by != 0 ? json(interruption_signal_name(outcome.interrupted_by)) : json(nullptr);
  return doc;
}

}  // namespace commbench
