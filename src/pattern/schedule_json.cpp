#include "commbench/pattern/schedule_json.hpp"

#include <nlohmann/json.hpp>

#include "commbench/core/collective.hpp"
#include "commbench/core/dtype.hpp"
#include "commbench/core/reduce_op.hpp"

namespace commbench {
namespace {

std::string_view kind_name(StepKind kind) {
  switch (kind) {
    case StepKind::collective: return "collective";
    case StepKind::peer: return "peer";
    case StepKind::compute: return "compute";
  }
  return "compute";
}

}  // namespace

std::string schedule_json_lines(const RankSchedule& schedule, bool with_compute) {
  std::string lines;
  for (std::size_t index = 0; index < schedule.steps.size(); ++index) {
    const ScheduleStep& step = schedule.steps[index];
    if (step.kind == StepKind::compute && !with_compute) continue;
    // Insertion order keeps the fields in the documented order.
    nlohmann::ordered_json line;
    line["step"] = index;
    line["rank"] = schedule.world_rank;
    line["kind"] = kind_name(step.kind);
    switch (step.kind) {
      case StepKind::collective: line["op"] = name_of(step.op); break;
      case StepKind::peer: line["op"] = name_of(Collective::sendrecv); break;
      case StepKind::compute: line["op"] = "compute"; break;
    }
    line["bytes"] = step.bytes;
    if (step.kind != StepKind::compute) {
      line["dtype"] = name_of(step.dtype);
      line["group"] = name_of(step.group);
    }
    line["stream"] = step.stream;
    line["phase"] = name_of(step.phase);
    line["label"] = step.label;
    line["layer"] = step.layer;
    line["micro_batch"] = step.micro_batch;
    line["waits_for"] = step.waits_for;
    if (step.kind == StepKind::collective && step.redop != ReduceOp::none) line["redop"] = name_of(step.redop);
    if (step.kind == StepKind::collective && step.op == Collective::alltoallv)
      line["distribution"] = to_string(step.distribution);
    if (step.kind == StepKind::peer) {
      line["round"] = step.peer_round;
      nlohmann::ordered_json transfers = nlohmann::ordered_json::array();
      for (const auto& [source, destination] : schedule.peer_rounds.at(step.peer_round).transfers)
        transfers.push_back({source, destination});
      line["transfers"] = transfers;
    }
    if (step.kind == StepKind::compute) line["seconds"] = step.compute_seconds;
    lines += line.dump() + "\n";
  }
  return lines;
}

}  // namespace commbench
