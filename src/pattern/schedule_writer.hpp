// Appends steps to one rank's schedule in enqueue order. Every collective goes on the
// stream named after its group: PyTorch's ProcessGroupNCCL runs all collectives of one
// process group on that group's one NCCL stream, in the order they were issued, whatever
// stream the framework issued them from; the framework's own streams only decide what the
// collective waits for, which `waits_for` says. Compute goes on "compute", pipeline
// send/recv on "pipeline".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "commbench/pattern/schedule.hpp"

namespace commbench {

// What a step stands for, for the report and --dump-schedule.
struct StepPlace {
  StepPhase phase = StepPhase::forward;
  std::string label;
  int layer = -1;
  int micro_batch = -1;
};

class ScheduleWriter {
 public:
  ScheduleWriter(int world_rank, DataType dtype);

  // Each returns the new step's index.
  std::size_t compute(const StepPlace& place, double seconds, std::vector<std::size_t> waits = {});
  std::size_t collective(Collective op, GroupRole group, std::uint64_t bytes, const StepPlace& place,
                         std::vector<std::size_t> waits = {});
  std::size_t alltoallv(GroupRole group, std::uint64_t bytes, const PeerDistribution& distribution,
                        const StepPlace& place, std::vector<std::size_t> waits = {});
  std::size_t peer(std::size_t round, std::uint64_t bytes, const StepPlace& place, std::vector<std::size_t> waits = {});
  std::size_t add_round(PlannedPeerRound round);

  // A collective of another type than the step's parameters (a gradient norm in fp64).
  void set_dtype(std::size_t step, DataType dtype) { schedule_.steps[step].dtype = dtype; }

  // The next compute step also waits for `step`: the framework blocks its compute on a
  // collective it waits for (a synchronous allreduce, a reduction without overlap_comm).
  void block_compute_on(std::size_t step);
  // The last compute step so far (what a collective issued now waits for), if any.
  bool has_compute() const { return last_compute_ != kNone; }
  std::size_t last_compute() const { return last_compute_; }

  const ScheduleStep& step(std::size_t index) const { return schedule_.steps[index]; }
  // Parameters gathered whole, and freed again, as the framework does between its calls:
  // the schedule keeps the most held at once (RankSchedule::gathered_peak_bytes).
  void hold_gathered(std::uint64_t bytes);
  void release_gathered(std::uint64_t bytes);
  RankSchedule take() { return std::move(schedule_); }

 private:
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::size_t append(ScheduleStep step, const StepPlace& place, std::vector<std::size_t> waits);

  RankSchedule schedule_;
  DataType dtype_;
  std::vector<std::size_t> compute_blocked_on_;
  std::size_t last_compute_ = kNone;
  std::uint64_t gathered_now_ = 0;
};

}  // namespace commbench
