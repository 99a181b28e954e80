#include "commbench/validate/validation_report.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "commbench/core/interrupted.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/core/reading_budget.hpp"

namespace commbench {
namespace {

std::string fault_subject(const ValidationOutcome& outcome, const Fault& fault) {
  switch (fault.kind) {
    case FaultKind::node: return "node " + outcome.host_list(fault.nodes);
    case FaultKind::link:
      return "link " + outcome.node_names[static_cast<std::size_t>(fault.nodes[0])] + " - " +
             outcome.node_names[static_cast<std::size_t>(fault.nodes[1])];
    case FaultKind::group: return "group " + outcome.host_list(fault.nodes);
  }
  return "?";
}

constexpr const char* kCutShort = "cut short at its time budget: scored from what it moved";

}  // namespace

std::string exclude_option(const ValidationOutcome& outcome) {
  const std::vector<int> excluded = outcome.excluded_nodes();
  return excluded.empty() ? "" : "--exclude=" + outcome.host_list(excluded);
}

std::string validation_plan_text(const PlanSettings& settings, int nodes) {
  const ReadingBudget budget;
  const std::size_t rounds = validation_pair_rounds(nodes, settings.pair_rounds, settings.seed).size();
  const std::string limit =
      settings.time_limit_seconds > 0
          ? fmt::format("at most {} s (--time-limit) and the reading under way",
                        significant_text(settings.time_limit_seconds))
          : std::string("no time limit (--time-limit 0)");
  return fmt::format("plan: {}, {}, then re-tests{}; a reading stops at {}x the time its expected rate needs (at "
                     "least {} s) and fails, cut short; {}",
                     count_text(static_cast<std::size_t>(nodes), "node"), count_text(rounds, "pair round"),
                     settings.group_collectives ? " and the collective over the nodes" : "",
                     significant_text(budget.factor), significant_text(budget.floor_seconds), limit);
}

int validation_exit_code(const ValidationOutcome& outcome) {
  if (outcome.interrupted_by != 0) return 128 + outcome.interrupted_by;
  if (!outcome.faults.empty() || outcome.wrong > 0) return 1;
  return outcome.complete ? 0 : 4;
}

std::string validation_summary(const ValidationOutcome& outcome, const PlanSettings& settings, std::size_t node_lines) {
  std::string text;
  const int rounds = outcome.pair_rounds + outcome.retest_rounds;
  text += fmt::format("plan: {}, {} ({} first, {} re-test), {}, {} s\n", count_text(outcome.node_names.size(), "node"),
                      count_text(static_cast<std::size_t>(rounds), "round"), outcome.pair_rounds, outcome.retest_rounds,
                      count_text(static_cast<std::size_t>(outcome.bisection_steps), "bisection step"),
                      fixed_text(outcome.elapsed_seconds, 2));
  const std::string fraction = significant_text(settings.expect.fraction, 3);
  const auto expectation = [&](double expected, bool given, const char* majority) {
    return fmt::format("expected >= {} GB/s ({} x {} GB/s, {})", significant_text(expected, 3), fraction,
                       significant_text(expected / settings.expect.fraction, 3), given ? "from --expect" : majority);
  };
  if (outcome.intra_expected_gbps > 0)
    text +=
        "intra-node collectives: " +
        expectation(outcome.intra_expected_gbps, settings.expect.intra_busbw_gbps.has_value(), "the nodes' median") +
        "\n";
  if (outcome.pair_reference_gbps > 0)
    text += "pairs: " +
            expectation(outcome.pair_expected_gbps, settings.expect.pair_gbps.has_value(),
                        "the median of the first rounds") +
            "\n";
  if (outcome.group_expected_gbps > 0)
    for (const GroupResult& group : outcome.groups)
      if (group.phase == "all nodes")
        text += fmt::format("collective over {}: {} GB/s busbw, expected >= {} GB/s\n",
                            count_text(group.nodes.size(), "node"), significant_text(group.busbw_gbps, 3),
                            significant_text(outcome.group_expected_gbps, 3));
  for (const Fault& fault : outcome.faults)
    text += fmt::format("FAIL {}: {}\n", fault_subject(outcome, fault), fault.reason);
  for (const std::string& note : outcome.notes) text += "note: " + note + "\n";
  if (outcome.excluded_nodes().size() * 2 > outcome.node_names.size())
    text += "note: more than half the nodes fail: the fabric as a whole, or the expected figure, is off\n";
  if (outcome.wrong > 0) text += fmt::format("FAIL check: {} bytes or elements received wrong\n", outcome.wrong);
  if (outcome.interrupted_by != 0)
    text += fmt::format("INCOMPLETE: interrupted by {} during {}\n", interruption_signal_name(outcome.interrupted_by),
                        outcome.stopped_before);
  else if (!outcome.complete)
    text += "INCOMPLETE: the time limit was reached before " + outcome.stopped_before + "\n";

  // Every node's verdict on a small cluster; on a large one the FAIL lines say it all and
  // the files hold every node.
  const std::vector<std::string> verdicts = outcome.node_verdicts();
  if (verdicts.size() <= node_lines)
    for (std::size_t node = 0; node < verdicts.size(); ++node)
      text += fmt::format("  {:<16} {}\n", outcome.node_names[node], verdicts[node]);
  const auto healthy = std::count(verdicts.begin(), verdicts.end(), "ok");
  text += fmt::format("nodes: {} ok, {} in a fault (node, link or group)\n", healthy,
                      static_cast<long>(verdicts.size()) - healthy);

  std::size_t nodes = 0, links = 0, groups = 0;
  for (const Fault& fault : outcome.faults)
    (fault.kind == FaultKind::node ? nodes : fault.kind == FaultKind::link ? links : groups) += 1;
  if (outcome.faults.empty() && outcome.wrong == 0)
    text += fmt::format("verdict: {} ({})\n",
                        outcome.complete              ? "healthy"
                        : outcome.interrupted_by != 0 ? "nothing failed before the run was stopped"
                                                      : "nothing failed before the time limit",
                        count_text(outcome.node_names.size(), "node"));
  else
    text += fmt::format("verdict: FAILED: {}, {}, {}{}\n", count_text(nodes, "node"), count_text(links, "link"),
                        count_text(groups, "group"), outcome.wrong > 0 ? ", wrong data received" : "");
  if (const std::string exclude = exclude_option(outcome); !exclude.empty()) text += exclude + "\n";
  return text;
}

std::vector<Record> validation_records(const ValidationOutcome& outcome) {
  const RecordKind& kind = record_kind("check");
  std::vector<Record> records;
  const auto row = [&](std::string_view check, std::string_view phase, std::optional<int> round, const std::string& a,
                       const std::string& b, const std::string& nodes, double measured, double expected,
                       std::string_view result, const std::string& reason) {
    // A figure of 0 is one the plan has not got (no expectation, no measurement).
    const auto figure = [](double value) { return value > 0 ? FieldValue{value} : FieldValue{std::monostate{}}; };
    records.push_back(Record{&kind,
                             {std::string(check), std::string(phase),
                              round ? FieldValue{std::int64_t{*round}} : FieldValue{std::monostate{}}, a, b, nodes,
                              figure(measured), figure(expected), std::string(result), reason},
                             {}});
  };
  const std::vector<std::string> verdicts = outcome.node_verdicts();
  for (std::size_t node = 0; node < verdicts.size(); ++node)
    row("node", "verdict", std::nullopt, outcome.node_names[node], "", "", 0, 0, verdicts[node] == "ok" ? "ok" : "fail",
        verdicts[node] == "ok" ? "" : verdicts[node]);
  for (std::size_t node = 0; node < outcome.intra_busbw.size(); ++node)
    if (const auto& busbw = outcome.intra_busbw[node])
      row("intra", "intra-node", std::nullopt, outcome.node_names[node], "", "", *busbw, outcome.intra_expected_gbps,
          *busbw < outcome.intra_expected_gbps ? "slow" : "ok", "");
  for (const PairResult& pair : outcome.pairs)
    row("pair", pair.phase, pair.round, outcome.node_names[static_cast<std::size_t>(pair.first)],
        outcome.node_names[static_cast<std::size_t>(pair.second)], "", pair.gbps, outcome.pair_expected_gbps,
        pair.slow ? "slow" : "ok", pair.cut_short ? kCutShort : "");
  for (const GroupResult& group : outcome.groups)
    row("group", group.phase, group.step, "", "", outcome.host_list(group.nodes), group.busbw_gbps,
        outcome.group_expected_gbps, group.short_of_expected ? "slow" : "ok", group.cut_short ? kCutShort : "");
  return records;
}

std::string validation_csv(const ValidationOutcome& outcome) {
  const RecordKind& kind = record_kind("check");
  std::string text = csv_header(kind) + "\n";
  for (const Record& record : validation_records(outcome)) text += csv_record_line(record, kind) + "\n";
  return text;
}

nlohmann::ordered_json validation_json(const ValidationOutcome& outcome, const PlanSettings& settings) {
  using json = nlohmann::ordered_json;
  const auto optional = [](const std::optional<double>& value) { return value ? json(*value) : json(nullptr); };
  json doc;
  doc["plan"] = {{"pair_rounds", outcome.pair_rounds},         {"retest_rounds", outcome.retest_rounds},
                 {"bisection_steps", outcome.bisection_steps}, {"seed", settings.seed},
                 {"fraction", settings.expect.fraction},       {"time_limit_s", settings.time_limit_seconds},
                 {"elapsed_s", outcome.elapsed_seconds}};
  doc["expected"] = {{"pair_gbps", outcome.pair_expected_gbps},
                     {"pair_reference_gbps", outcome.pair_reference_gbps},
                     {"pair_reference_given", settings.expect.pair_gbps.has_value()},
                     {"intra_busbw_gbps", outcome.intra_expected_gbps},
                     {"group_busbw_gbps", outcome.group_expected_gbps}};
  const std::vector<std::string> verdicts = outcome.node_verdicts();
  json nodes = json::array();
  for (std::size_t node = 0; node < verdicts.size(); ++node)
    nodes.push_back(
        {{"host", outcome.node_names[node]},
         {"verdict", verdicts[node] == "ok" ? "ok" : "fail"},
         {"reason", verdicts[node] == "ok" ? "" : verdicts[node]},
         {"local_findings", node < outcome.local_findings.size() ? json(outcome.local_findings[node]) : json::array()},
         {"intra_busbw_gbps",
          node < outcome.intra_busbw.size() ? optional(outcome.intra_busbw[node]) : json(nullptr)}});
  doc["nodes"] = nodes;
  json faults = json::array();
  for (const Fault& fault : outcome.faults) {
    json hosts = json::array();
    for (const int node : fault.nodes) hosts.push_back(outcome.node_names[static_cast<std::size_t>(node)]);
    faults.push_back({{"kind", std::string(name_of(fault.kind))}, {"hosts", hosts}, {"reason", fault.reason}});
  }
  doc["faults"] = faults;
  json pairs = json::array();
  for (const PairResult& pair : outcome.pairs)
    pairs.push_back({{"a", outcome.node_names[static_cast<std::size_t>(pair.first)]},
                     {"b", outcome.node_names[static_cast<std::size_t>(pair.second)]},
                     {"phase", pair.phase},
                     {"round", pair.round},
                     {"gbps", pair.gbps},
                     {"slow", pair.slow},
                     {"cut_short", pair.cut_short}});
  doc["pairs"] = pairs;
  json groups = json::array();
  for (const GroupResult& group : outcome.groups)
    groups.push_back({{"hosts", outcome.host_list(group.nodes)},
                      {"nodes", group.nodes.size()},
                      {"phase", group.phase},
                      {"step", group.step},
                      {"busbw_gbps", group.busbw_gbps},
                      {"short", group.short_of_expected},
                      {"cut_short", group.cut_short}});
  doc["groups"] = groups;
  doc["notes"] = outcome.notes;
  const std::vector<int> excluded = outcome.excluded_nodes();
  json excluded_hosts = json::array();
  for (const int node : excluded) excluded_hosts.push_back(outcome.node_names[static_cast<std::size_t>(node)]);
  doc["excluded"] = excluded_hosts;
  doc["exclude_option"] = exclude_option(outcome);
  doc["wrong"] = outcome.wrong;
  doc["complete"] = outcome.complete;
  doc["stopped_before"] = outcome.stopped_before;
  doc["exit_code"] = validation_exit_code(outcome);
  doc["interrupted_by"] =
      outcome.interrupted_by != 0 ? json(interruption_signal_name(outcome.interrupted_by)) : json(nullptr);
  return doc;
}

}  // namespace commbench
