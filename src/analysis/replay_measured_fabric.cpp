#include "commbench/analysis/replay_measured_fabric.hpp"

#include <optional>
#include <set>

#include <fmt/format.h>

#include "commbench/analysis/replay_fabric.hpp"
#include "commbench/core/dtype.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/core/op_case.hpp"
#include "commbench/core/size.hpp"
#include "commbench/runner/batch_length.hpp"
#include "commbench/runner/runner.hpp"

namespace commbench {
namespace {

// The job's classes as bench-collectives cases on `ranks` ranks, one per operation and
// size (in the first such class's element type), in the job's order. A type this build
// cannot run is left out with a note: its class then gets no fabric figure.
std::vector<OpCase> plan_of(const TraceSummary& job, int ranks, std::set<std::string>& notes) {
  std::vector<OpCase> plan;
  std::set<std::pair<Collective, std::uint64_t>> seen;
  for (const TracedClass& traced : job.classes) {
    const std::optional<Collective> op = collective_named(traced.op);
    if (!op || traced.bytes == 0 || seen.contains({*op, traced.bytes})) continue;
    DataType dtype = DataType::float32;
    if (!traced.dtype.empty()) {
      try {
        dtype = parse_data_type(traced.dtype, "the job's type");
      } catch (const UsageError&) {
        notes.insert(fmt::format("{} of {} in {}: not measured (no such element type here)", traced.op,
                                 format_size(traced.bytes), traced.dtype));
        continue;
      }
    }
    seen.insert({*op, traced.bytes});
    PlanRequest request;
    request.ops = {*op};
    request.dtypes = {dtype};
    request.redops = {ReduceOp::sum};
    request.placements = {Placement::out_of_place};
    request.sizes = {traced.bytes};
    request.ranks = ranks;
    for (OpCase& c : build_plan(request)) plan.push_back(std::move(c));
  }
  return plan;
}

}  // namespace

MeasuredFabric::MeasuredFabric(const TraceSummary& job, Backend& backend, Watchdog& watchdog,
                               const StoppingCriteria& stopping, std::uint64_t warmup)
    : ranks_(backend.ranks()), nodes_(backend.group().node_count()) {
  const std::vector<OpCase> plan = plan_of(job, ranks_, notes_);
  RunnerSettings settings;
  settings.stopping = stopping;
  settings.warmup_iterations = warmup;
  settings.target_batch_seconds = default_batch_seconds(backend.name());
  Runner runner(backend, settings, &watchdog);
  runner.prepare(plan);
  for (const OpCase& c : plan) {
    const ResultRow row = runner.run(c);
    points_[{c.op, c.requested_bytes}] = Point{row.time_us * 1e-6, row.busbw_gbps};
  }
}

double MeasuredFabric::seconds(const CommunicationCostQuery& query) const {
  const auto found = points_.find({query.op, query.bytes});
  if (found == points_.end())
    throw UsageError(fmt::format("{} of {} was not measured here", name_of(query.op), format_size(query.bytes)));
  if (query.ranks == ranks_ || found->second.busbw_gbps <= 0) return found->second.seconds;
  notes_.insert(
      fmt::format("{}: the job's groups of {} ranks held against {} measured on this job's {} ranks, "
                  "through busbw",
                  name_of(query.op), query.ranks, name_of(query.op), ranks_));
  return static_cast<double>(query.bytes) * bus_bandwidth_factor(query.op, query.ranks) /
         (found->second.busbw_gbps * 1e9);
}

std::string MeasuredFabric::basis() const {
  return fmt::format("--measure-fabric: measured here on {}, {}", count_text(ranks_, "rank"),
                     count_text(nodes_, "node"));
}

}  // namespace commbench
