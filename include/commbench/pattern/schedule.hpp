// One training step's communication and compute, as one rank issues it: the ordered list
// bench-patterns executes (pattern_executor), dumps (--dump-schedule) and reports on.
//
// A schedule is per rank because pipeline stages differ; data-parallel patterns give every
// rank the same list. Steps are in enqueue order: the executor enqueues them one after the
// other on their named streams, and a step listed in `waits_for` (an earlier step, any
// stream) must complete before this one starts — that is how a bucket's allreduce waits
// for the backward compute that produced its gradients, and how the next layer's compute
// waits for its parameters' all-gather. Communication over one group must appear in the
// same order on every member of that group (MPI and NCCL require it); generators
// guarantee it and the executor relies on it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "commbench/core/collective.hpp"
#include "commbench/core/dtype.hpp"
#include "commbench/core/peer_distribution.hpp"
#include "commbench/core/reduce_op.hpp"
#include "commbench/pattern/parallel_layout.hpp"

namespace commbench {

enum class StepKind {
  collective,  // `op` over `group`
  peer,        // one round of point-to-point transfers over `group` (pipeline send/recv)
  compute,     // the compute stand-in busy for `compute_seconds`
};

// The phases a step reports under; also the --dump-schedule "phase" field.
enum class StepPhase { forward, backward, optimizer };
std::string_view name_of(StepPhase phase);  // "forward", "backward", "optimizer"
// The phase `name` names as name_of spells it; nullopt for none.
std::optional<StepPhase> step_phase_named(std::string_view name);

struct ScheduleStep {
  StepKind kind = StepKind::compute;
  // "compute" for compute; a collective or peer step runs on the stream named after its
  // group ("data", "tensor", "pipeline", ...: name_of(GroupRole)), as c10d runs each
  // process group's collectives on one NCCL stream in issue order (docs/patterns.md).
  std::string stream;
  StepPhase phase = StepPhase::forward;
  std::string label;     // what it stands for: "layer 3 params", "bucket 7", "mb 2 activations"
  int layer = -1;        // model layer (or FSDP unit / ZeRO-3 submodule); -1 none
  int micro_batch = -1;  // -1 none

  // collective and peer steps
  GroupRole group = GroupRole::world;
  // nccl-tests' size convention: the whole buffer for allreduce/broadcast, the gathered
  // output for allgather, the scattered input for reducescatter, the send buffer for
  // alltoall(v); for a peer step, the bytes of each message.
  std::uint64_t bytes = 0;

  // collective steps
  Collective op = Collective::allreduce;
  DataType dtype = DataType::bfloat16;
  ReduceOp redop = ReduceOp::none;  // sum for reducing collectives
  PeerDistribution distribution;    // alltoallv: routing imbalance

  // peer steps: index into RankSchedule::peer_rounds
  std::size_t peer_round = 0;

  // compute steps
  double compute_seconds = 0;

  // Indices of earlier steps of this schedule that must complete before this one starts.
  std::vector<std::size_t> waits_for;
};

// A set of point-to-point transfers over one group, in that group's ranks; every member
// of the group has the same list of rounds in the same order (creating an exchange is
// collective over the group), and a peer step names the round it runs.
struct PlannedPeerRound {
  GroupRole group = GroupRole::pipeline;
  std::vector<std::pair<int, int>> transfers;  // {source, destination}
  std::uint64_t message_bytes = 0;
};

struct RankSchedule {
  int world_rank = 0;
  std::vector<ScheduleStep> steps;
  std::vector<PlannedPeerRound> peer_rounds;
  // The most parameter bytes the framework holds gathered at once during the step (ZeRO-3's
  // fetched and prefetched parameters, FSDP's unsharded units): memory its settings decide
  // (pattern/rank_memory.hpp). 0 where nothing is gathered, and for a step read from a file.
  std::uint64_t gathered_peak_bytes = 0;
};

}  // namespace commbench
