// bench-replay --measure-fabric: the fabric's figure for each of the job's collective
// classes measured on the spot, on this job's ranks, as bench-collectives measures a case
// (Runner: the same stopping rules, batches and agreement across ranks). It answers the
// cost model's queries that --fabric FILE answers from a sweep, at exactly the job's sizes.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "commbench/backend/backend.hpp"
#include "commbench/core/stopping_rule.hpp"
#include "commbench/pattern/communication_cost.hpp"
#include "commbench/replay/trace_summary.hpp"
#include "commbench/runner/watchdog.hpp"

namespace commbench {

class MeasuredFabric : public CommunicationCostModel {
 public:
  // Collective: every rank measures each operation and size of `job`'s collective
  // classes (in the job's order, in the first class's element type), with `stopping` and
  // `warmup` iterations.
  MeasuredFabric(const TraceSummary& job, Backend& backend, Watchdog& watchdog, const StoppingCriteria& stopping,
                 std::uint64_t warmup);

  // The measured time at the query's size; a group of another rank count than this job's
  // is converted through busbw (and noted). UsageError for a size or operation not measured.
  double seconds(const CommunicationCostQuery& query) const override;
  std::string basis() const override;
  std::vector<std::string> notes() const override { return {notes_.begin(), notes_.end()}; }
  std::size_t cases() const { return points_.size(); }

 private:
  struct Point {
    double seconds = 0;
    double busbw_gbps = 0;
  };
  int ranks_ = 0, nodes_ = 0;
  std::map<std::pair<Collective, std::uint64_t>, Point> points_;  // by operation and nccl-tests size
  mutable std::set<std::string> notes_;
};

}  // namespace commbench
