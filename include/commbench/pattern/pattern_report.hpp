// What bench-patterns says about a measured step: per communication type its bandwidth
// against the layout's theoretical busbw, the load on each NIC, and the verdict —
// compute-bound, bandwidth-bound or latency-bound — with its top cause in one line. Pure
// arithmetic over the agreed breakdown and the bandwidth model's figures; the rules are
// in docs/methodology.md ("bench-patterns: exposed communication and the verdict").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "commbench/pattern/schedule.hpp"
#include "commbench/pattern/step_accounting.hpp"

namespace commbench {

// A step is compute-bound while less than this share of it is exposed communication.
inline constexpr double kComputeBoundExposedShare = 0.10;
// Without a theoretical busbw the half-peak size cannot be derived: below this median
// size a type is called latency-bound (the order of the half-peak size of NCCL's and
// MPI's allreduce on the fabrics commbench's sweeps measured; docs/methodology.md).
inline constexpr std::uint64_t kFallbackLatencyBoundBytes = 64 * 1024;

// The group a type runs over and what the bandwidth model says it should reach.
struct GroupBandwidth {
  int ranks = 1;
  int nodes = 1;
  std::optional<double> spec_gbps;        // theoretical busbw
  std::optional<double> achievable_gbps;  // what NCCL's link model assumes
  std::string basis;
};

struct CommunicationTypeReport {
  CommunicationTotals totals;
  GroupBandwidth group;
  std::uint64_t median_bytes = 0;
  double algbw_gbps = 0;             // bytes / time (0 without time)
  double busbw_gbps = 0;             // algbw x the nccl-tests factor of the group's ranks
  std::optional<double> efficiency;  // busbw / spec
  // S½: the size at which this type's busbw reaches half the achievable figure, from
  // its own measured latency term; empty without a theoretical figure.
  std::optional<double> half_peak_bytes;
  bool latency_bound = false;
};

// The NICs between nodes, from the bandwidth model of rank 0's node.
struct NicModel {
  int nics = 0;                    // per node; 0 when unknown
  std::optional<double> nic_gbps;  // one port's spec rate
  std::string basis;
};

struct NicLoad {
  bool crosses_nodes = false;
  double bytes_per_node = 0;  // per step, estimated as a ring moves them (busbw factor x bytes)
  double gbps_per_nic = 0;    // per second of step, per NIC
  std::optional<double> nic_gbps;
  std::string text;  // "2.1 GB/s per NIC of 25 GB/s (4 NICs)", or why nothing crosses a NIC
};

enum class StepBound { compute, bandwidth, latency };
std::string_view name_of(StepBound bound);  // "compute-bound", ...

struct PatternReport {
  StepBreakdown step;
  std::vector<CommunicationTypeReport> types;
  NicLoad nic;
  StepBound bound = StepBound::compute;
  std::string top_cause;
};

// The nccl-tests bus factor of a type: its collective's over `ranks`; 1 for peer rounds.
double bus_factor_of(const CommunicationType& type, int ranks);
// Median of the schedule's sizes for each communication type.
std::map<CommunicationType, std::uint64_t> median_sizes(const RankSchedule& schedule);

// A pipeline stage's bubble: the measured idle fraction of its step (what is not compute:
// the warm-up and drain of 1F1B and any exchange it waits on) beside the ideal
// (P - 1) / (v x M + P - 1) of Megatron's schedules. Empty without pipeline stages.
struct PipelineBubble {
  double measured = 0;
  double ideal = 0;
};
std::optional<PipelineBubble> pipeline_bubble(int stages, int micro_batches, int chunks, const StepBreakdown& step);

PatternReport build_pattern_report(const StepBreakdown& step, const std::map<CommunicationType, std::uint64_t>& medians,
                                   const std::map<CommunicationType, GroupBandwidth>& bandwidths, const NicModel& nic);

}  // namespace commbench
