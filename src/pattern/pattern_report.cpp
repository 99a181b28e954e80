#include "commbench/pattern/pattern_report.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

#include "commbench/core/name_lookup.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/core/size.hpp"
#include "commbench/core/statistics.hpp"
#include "commbench/pattern/pipeline_order.hpp"

namespace commbench {

std::string_view name_of(StepBound bound) {
  using Named = detail::NamedValue<StepBound>;
  static constexpr std::array kNames{Named{"compute-bound", StepBound::compute},
                                     Named{"bandwidth-bound", StepBound::bandwidth},
                                     Named{"latency-bound", StepBound::latency}};
  return detail::name_in<StepBound>(kNames, bound);
}

double bus_factor_of(const CommunicationType& type, int ranks) {
  return type.kind == StepKind::peer ? 1.0 : bus_bandwidth_factor(type.op, ranks);
}

std::map<CommunicationType, std::uint64_t> median_sizes(const RankSchedule& schedule) {
  std::map<CommunicationType, std::vector<double>> sizes;
  for (const ScheduleStep& step : schedule.steps)
    if (step.kind != StepKind::compute) sizes[communication_type_of(step)].push_back(static_cast<double>(step.bytes));
  std::map<CommunicationType, std::uint64_t> medians;
  for (auto& [type, list] : sizes) medians[type] = static_cast<std::uint64_t>(std::llround(median_of(std::move(list))));
  return medians;
}

namespace {

CommunicationTypeReport type_report(const CommunicationTotals& totals, const GroupBandwidth& group,
                                    std::uint64_t median_bytes) {
  CommunicationTypeReport report;
  report.totals = totals;
  report.group = group;
  report.median_bytes = median_bytes;
  const double factor = bus_factor_of(totals.type, group.ranks);
  if (totals.seconds > 0) {
    report.algbw_gbps = static_cast<double>(totals.bytes) / totals.seconds / 1e9;
    report.busbw_gbps = report.algbw_gbps * factor;
  }
  if (group.spec_gbps && *group.spec_gbps > 0) report.efficiency = report.busbw_gbps / *group.spec_gbps;
  const std::optional<double> peak = group.achievable_gbps ? group.achievable_gbps : group.spec_gbps;
  if (peak && *peak > 0 && factor > 0 && totals.count > 0) {
    // t = alpha + S x factor / B per collective: the latency term alpha is what the mean
    // collective took beyond moving its bytes at the achievable busbw; busbw reaches half
    // of B at S½ = alpha x B / factor.
    const double count = static_cast<double>(totals.count);
    const double mean_bytes = static_cast<double>(totals.bytes) / count;
    const double bandwidth_term = mean_bytes * factor / (*peak * 1e9);
    const double latency_term = std::max(0.0, totals.seconds / count - bandwidth_term);
    report.half_peak_bytes = latency_term * *peak * 1e9 / factor;
    report.latency_bound = static_cast<double>(median_bytes) < *report.half_peak_bytes;
  } else {
    report.latency_bound = median_bytes < kFallbackLatencyBoundBytes;
  }
  return report;
}

std::string gbps_text(double gbps) { return significant_text(gbps, 3) + " GB/s"; }

}  // namespace

PatternReport build_pattern_report(const StepBreakdown& step, const std::map<CommunicationType, std::uint64_t>& medians,
                                   const std::map<CommunicationType, GroupBandwidth>& bandwidths, const NicModel& nic) {
  PatternReport report;
  report.step = step;
  for (const CommunicationTotals& totals : step.types) {
    const auto group = bandwidths.find(totals.type);
    const auto median = medians.find(totals.type);
    const std::uint64_t median_bytes =
        median != medians.end() ? median->second : (totals.count > 0 ? totals.bytes / totals.count : 0);
    report.types.push_back(
        type_report(totals, group != bandwidths.end() ? group->second : GroupBandwidth{}, median_bytes));
  }

  // NICs: a ring over a group spanning nodes sends busbw-factor x bytes out of each node
  // (one inter-node edge per node per ring, the rings together carrying the factor).
  for (const CommunicationTypeReport& type : report.types) {
    if (type.group.nodes <= 1) continue;
    report.nic.crosses_nodes = true;
    report.nic.bytes_per_node +=
        static_cast<double>(type.totals.bytes) * bus_factor_of(type.totals.type, type.group.ranks);
  }
  report.nic.nic_gbps = nic.nic_gbps;
  if (!report.nic.crosses_nodes) {
    report.nic.text = "no group spans nodes: nothing crosses a NIC";
  } else if (nic.nics <= 0 || step.step_seconds <= 0) {
    report.nic.text = significant_text(report.nic.bytes_per_node / std::max(step.step_seconds, 1e-12) / 1e9, 3) +
                      " GB/s per node; NICs unknown (" + nic.basis + ")";
  } else {
    report.nic.gbps_per_nic = report.nic.bytes_per_node / step.step_seconds / nic.nics / 1e9;
    report.nic.text = fmt::format("{} per NIC{} ({} NIC{} per node)", gbps_text(report.nic.gbps_per_nic),
                                  nic.nic_gbps ? " of " + gbps_text(*nic.nic_gbps) : std::string(" (rate unknown)"),
                                  nic.nics, nic.nics == 1 ? "" : "s");
  }

  // The verdict: compute-bound while little is exposed; otherwise the type that fills
  // the most exposed time decides between bandwidth and latency.
  const double exposed_share = step.step_seconds > 0 ? step.exposed_seconds / step.step_seconds : 0;
  const auto top = std::max_element(report.types.begin(), report.types.end(),
                                    [](const CommunicationTypeReport& a, const CommunicationTypeReport& b) {
                                      return a.totals.exposed_seconds < b.totals.exposed_seconds;
                                    });
  const std::string exposed_text = significant_text(100 * exposed_share, 3) + "% of the step exposed";
  if (exposed_share < kComputeBoundExposedShare || top == report.types.end() || top->totals.exposed_seconds <= 0) {
    report.bound = StepBound::compute;
    report.top_cause = "compute: " + significant_text(step.compute_seconds * 1e3, 4) + " ms of a " +
                       significant_text(step.step_seconds * 1e3, 4) + " ms step, " + exposed_text;
    return report;
  }
  report.bound = top->latency_bound ? StepBound::latency : StepBound::bandwidth;
  std::string line = fmt::format("{}: {} ms exposed ({}), {} x median {} at {} busbw", label_of(top->totals.type),
                                 significant_text(top->totals.exposed_seconds * 1e3, 4), exposed_text,
                                 top->totals.count, format_size(top->median_bytes), gbps_text(top->busbw_gbps));
  if (top->group.spec_gbps) line += " of " + gbps_text(*top->group.spec_gbps);
  if (top->latency_bound && top->half_peak_bytes)
    line += "; half-peak size " + format_size(static_cast<std::uint64_t>(*top->half_peak_bytes)) +
            ": fewer, larger collectives";
  else if (top->latency_bound)
    line += "; below " + format_size(kFallbackLatencyBoundBytes) + ": fewer, larger collectives";
  report.top_cause = line;
  return report;
}

std::optional<PipelineBubble> pipeline_bubble(int stages, int micro_batches, int chunks, const StepBreakdown& step) {
  if (stages < 2 || step.step_seconds <= 0) return std::nullopt;
  PipelineBubble bubble;
  bubble.measured = std::clamp(1.0 - step.compute_seconds / step.step_seconds, 0.0, 1.0);
  bubble.ideal = ideal_pipeline_bubble(stages, micro_batches, chunks);
  return bubble;
}

}  // namespace commbench
