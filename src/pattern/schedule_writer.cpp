#include "schedule_writer.hpp"

#include <algorithm>
#include <stdexcept>

namespace commbench {

ScheduleWriter::ScheduleWriter(int world_rank, DataType dtype) : dtype_(dtype) { schedule_.world_rank = world_rank; }

std::size_t ScheduleWriter::append(ScheduleStep step, const StepPlace& place, std::vector<std::size_t> waits) {
  const std::size_t index = schedule_.steps.size();
  std::sort(waits.begin(), waits.end());
  waits.erase(std::unique(waits.begin(), waits.end()), waits.end());
  if (!waits.empty() && waits.back() >= index) throw std::logic_error("ScheduleWriter: a step waits for a later one");
  step.phase = place.phase;
  step.label = place.label;
  step.layer = place.layer;
  step.micro_batch = place.micro_batch;
  step.waits_for = std::move(waits);
  schedule_.steps.push_back(std::move(step));
  return index;
}

std::size_t ScheduleWriter::compute(const StepPlace& place, double seconds, std::vector<std::size_t> waits) {
  waits.insert(waits.end(), compute_blocked_on_.begin(), compute_blocked_on_.end());
  compute_blocked_on_.clear();
  ScheduleStep step;
  step.kind = StepKind::compute;
  step.stream = "compute";
  step.compute_seconds = seconds;
  last_compute_ = append(std::move(step), place, std::move(waits));
  return last_compute_;
}

std::size_t ScheduleWriter::collective(Collective op, GroupRole group, std::uint64_t bytes, const StepPlace& place,
                                       std::vector<std::size_t> waits) {
  ScheduleStep step;
  step.kind = StepKind::collective;
  step.stream = std::string(name_of(group));
  step.group = group;
  step.bytes = bytes;
  step.op = op;
  step.dtype = dtype_;
  step.redop = reduces(op) ? ReduceOp::sum : ReduceOp::none;
  return append(std::move(step), place, std::move(waits));
}

std::size_t ScheduleWriter::alltoallv(GroupRole group, std::uint64_t bytes, const PeerDistribution& distribution,
                                      const StepPlace& place, std::vector<std::size_t> waits) {
  const std::size_t index = collective(Collective::alltoallv, group, bytes, place, std::move(waits));
  schedule_.steps[index].distribution = distribution;
  return index;
}

std::size_t ScheduleWriter::peer(std::size_t round, std::uint64_t bytes, const StepPlace& place,
                                 std::vector<std::size_t> waits) {
  ScheduleStep step;
  step.kind = StepKind::peer;
  step.stream = std::string(name_of(schedule_.peer_rounds.at(round).group));
  step.group = schedule_.peer_rounds[round].group;
  step.bytes = bytes;
  step.dtype = dtype_;
  step.peer_round = round;
  return append(std::move(step), place, std::move(waits));
}

std::size_t ScheduleWriter::add_round(PlannedPeerRound round) {
  schedule_.peer_rounds.push_back(std::move(round));
  return schedule_.peer_rounds.size() - 1;
}

void ScheduleWriter::block_compute_on(std::size_t step) { compute_blocked_on_.push_back(step); }

void ScheduleWriter::hold_gathered(std::uint64_t bytes) {
  gathered_now_ += bytes;
  schedule_.gathered_peak_bytes = std::max(schedule_.gathered_peak_bytes, gathered_now_);
}

void ScheduleWriter::release_gathered(std::uint64_t bytes) { gathered_now_ -= std::min(bytes, gathered_now_); }

}  // namespace commbench
