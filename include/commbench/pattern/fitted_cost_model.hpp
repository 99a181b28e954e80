// A cost model fitted to one measured step: for each kind of communication (op and group
// size), a latency and a per-byte time by least squares over the step's items, each item's
// time being what the step accounting counts (its end less when it could start). It lets
// `--tune` predict how a candidate setting that only regroups the same bytes (other bucket
// sizes, other prefetch) would do on the machine just measured, without a sweep.
#pragma once

#include <map>
#include <span>
#include <string>
#include <tuple>

#include "commbench/pattern/communication_cost.hpp"
#include "commbench/pattern/schedule.hpp"
#include "commbench/pattern/step_accounting.hpp"

namespace commbench {

class FittedCostModel final : public CommunicationCostModel {
 public:
  // `timings` are the measured step's, one per step of `schedule` (world rank
  // schedule.world_rank of `layout`).
  FittedCostModel(const ParallelLayout& layout, const RankSchedule& schedule, std::span<const ItemTiming> timings);

  // UsageError for a kind of communication the measured step did not have.
  double seconds(const CommunicationCostQuery& query) const override;
  std::string basis() const override { return "fitted to the measured start settings"; }

  struct Line {
    double latency_seconds = 0;
    double seconds_per_byte = 0;
  };
  // The fitted lines, by kind, op and group size.
  const std::map<std::tuple<StepKind, Collective, int>, Line>& lines() const { return lines_; }

 private:
  std::map<std::tuple<StepKind, Collective, int>, Line> lines_;
};

}  // namespace commbench
