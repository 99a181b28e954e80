#include "commbench/analysis/replay_fabric.hpp"

#include <fmt/format.h>

#include "commbench/core/collective.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/core/size.hpp"

namespace commbench {

std::optional<Collective> collective_named(const std::string& op) {
  for (const Collective collective : {Collective::allreduce, Collective::allgather, Collective::reducescatter,
                                      Collective::broadcast, Collective::reduce, Collective::alltoall})
    if (name_of(collective) == op) return collective;
  return std::nullopt;
}

FabricComparison compare_with_fabric(const TraceSummary& summary, const CommunicationCostModel& fabric, int nodes) {
  FabricComparison comparison;
  bool untimed_figures = false;  // fabric figures for classes the traces gave no time
  for (const TracedClass& c : summary.classes) {
    FabricFigure figure;
    const std::optional<Collective> collective = collective_named(c.op);
    if (!collective || c.bytes == 0 || c.group_ranks < 2) {
      comparison.classes.push_back(figure);
      continue;
    }
    CommunicationCostQuery query;
    query.op = *collective;
    query.bytes = c.bytes;
    query.ranks = c.group_ranks;
    query.nodes = std::max(1, std::min(nodes, c.group_ranks));
    try {
      figure.seconds = fabric.seconds(query);
    } catch (const UsageError& e) {
      comparison.notes.push_back(fmt::format("{} of {}: no fabric figure ({})", c.op, format_size(c.bytes), e.what()));
      comparison.classes.push_back(figure);
      continue;
    }
    // What the fabric gives at the job's size stands whether or not the traces timed the
    // job's calls; the ratio and the totals need both.
    if (*figure.seconds > 0) {
      figure.busbw_gbps =
          static_cast<double>(c.bytes) / *figure.seconds * 1e-9 * bus_bandwidth_factor(*collective, c.group_ranks);
      if (c.busbw_gbps && c.seconds) {
        figure.ratio = *c.busbw_gbps / *figure.busbw_gbps;
        comparison.job_seconds += *c.seconds * static_cast<double>(c.calls);
        comparison.fabric_seconds += *figure.seconds * static_cast<double>(c.calls);
      } else {
        untimed_figures = true;
      }
    }
    comparison.classes.push_back(figure);
  }
  if (comparison.job_seconds > 0)
    comparison.verdict = fmt::format(
        "the job's collectives ran at {}% of the fabric's busbw: {} ms per rank, {} ms at the fabric's speed ({})",
        significant_text(100 * comparison.fabric_seconds / comparison.job_seconds, 3),
        significant_text(comparison.job_seconds * 1e3, 4), significant_text(comparison.fabric_seconds * 1e3, 4),
        fabric.basis());
  else if (untimed_figures)
    comparison.verdict = fmt::format(
        "the traces timed none of the calls the fabric has a figure for: its busbw at their sizes is given, with no "
        "ratio ({})",
        fabric.basis());
  else
    comparison.verdict = "no call of the job could be held against the fabric";
  // How the figures were stretched to the job's sizes and groups; taken before the top
  // cause (replay_cause.hpp) asks the fabric of sizes of its own (its latency floor).
  for (const std::string& note : fabric.notes()) comparison.notes.push_back(note);
  return comparison;
}

}  // namespace commbench
