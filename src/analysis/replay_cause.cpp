#include "commbench/analysis/replay_cause.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "commbench/core/error.hpp"
#include "commbench/core/number_text.hpp"

namespace commbench {

namespace {

// A cause below this share of the ranks' communication time is noise, not a finding.
constexpr double kStandsOut = 0.1;
// A call the fabric runs in under this many times its latency floor is latency-bound.
constexpr double kLatencyBound = 2.0;

std::string ms(double seconds) { return significant_text(seconds * 1e3, 3) + " ms"; }

double mean_communication_seconds(const TraceSummary& summary) {
  double total = 0;
  for (const RankTraceSummary& rank : summary.ranks) total += rank.communication_seconds.value_or(0);
  return summary.ranks.empty() ? 0.0 : total / static_cast<double>(summary.ranks.size());
}

// The calls the fabric runs at its latency floor: how many per rank, and that floor's time.
CommunicationCause small_calls(const TraceSummary& summary, const FabricComparison& comparison,
                               const CommunicationCostModel& fabric, int nodes) {
  CommunicationCause cause{"small collectives", 0, ""};
  std::uint64_t calls = 0;
  for (std::size_t i = 0; i < summary.classes.size() && i < comparison.classes.size(); ++i) {
    const TracedClass& c = summary.classes[i];
    const FabricFigure& figure = comparison.classes[i];
    const std::optional<Collective> collective = collective_named(c.op);
    if (!figure.seconds || !collective) continue;
    CommunicationCostQuery floor_query;
    floor_query.op = *collective;
    floor_query.bytes = 1;
    floor_query.ranks = c.group_ranks;
    floor_query.nodes = std::max(1, std::min(nodes, c.group_ranks));
    double floor = 0;
    try {
      floor = fabric.seconds(floor_query);
    } catch (const UsageError&) {
      continue;  // the comparison's notes already say what the fabric lacks
    }
    if (*figure.seconds >= kLatencyBound * floor) continue;
    calls += c.calls;
    cause.seconds += floor * static_cast<double>(c.calls);
  }
  cause.text = fmt::format(
      "too many small collectives: {} calls per rank run at the fabric's latency floor, {} per rank in latency alone "
      "(fewer, larger calls save it: bucket sizes)",
      calls, ms(cause.seconds));
  return cause;
}

CommunicationCause straggler(const TraceSummary& summary) {
  CommunicationCause cause{"straggler", 0, ""};
  if (!summary.straggler) return cause;
  for (const RankTraceSummary& rank : summary.ranks)
    if (rank.rank == *summary.straggler && summary.ranks.size() > 1) {
      // The waiting its lateness cost the others, per other rank.
      cause.seconds = rank.caused_wait_seconds / static_cast<double>(summary.ranks.size() - 1);
      cause.text = fmt::format(
          "one straggling rank: rank {}{} arrives last at {} of {} calls; each of the others waits {} in all for it "
          "(look at "
          "that rank's node and its compute, not the fabric)",
          rank.rank, rank.host.empty() ? "" : " (" + rank.host + ")", rank.last_arrivals, summary.calls,
          ms(cause.seconds));
    }
  return cause;
}

}  // namespace

CommunicationCause top_cause(const TraceSummary& summary, const FabricComparison& comparison,
                             const CommunicationCostModel& fabric, int nodes) {
  CommunicationCause shortfall{"fabric shortfall", std::max(0.0, comparison.job_seconds - comparison.fabric_seconds),
                               ""};
  if (comparison.job_seconds > 0)
    shortfall.text = fmt::format(
        "the job's collectives reach {}% of the fabric's busbw: {} per rank more than the same calls take on this "
        "fabric (look at how the framework issues them: overlap, contention with compute, its backend's settings)",
        significant_text(100 * comparison.fabric_seconds / comparison.job_seconds, 3), ms(shortfall.seconds));
  const CommunicationCause candidates[] = {shortfall, small_calls(summary, comparison, fabric, nodes),
                                           straggler(summary)};
  const CommunicationCause* top = &candidates[0];
  for (const CommunicationCause& candidate : candidates)
    if (candidate.seconds > top->seconds) top = &candidate;
  const double communication = mean_communication_seconds(summary);
  if (top->seconds <= 0 || top->seconds < kStandsOut * communication)
    return {"", 0,
            fmt::format("no cause stands out: the job's calls run near the fabric's speed, few are latency-bound and "
                        "no rank holds the others back ({} of communication per rank)",
                        ms(communication))};
  return *top;
}

FabricComparison judge_against_fabric(const TraceSummary& summary, const CommunicationCostModel& fabric, int nodes) {
  FabricComparison comparison = compare_with_fabric(summary, fabric, nodes);
  if (comparison.job_seconds > 0) comparison.cause = top_cause(summary, comparison, fabric, nodes).text;
  return comparison;
}

}  // namespace commbench
