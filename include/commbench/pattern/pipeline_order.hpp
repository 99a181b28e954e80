// The order in which each pipeline stage runs its micro-batches' forward and backward
// passes, as Megatron-LM's schedules run them
// (megatron/core/pipeline_parallel/schedules.py: forward_backward_pipelining_without_interleaving
// and ..._with_interleaving), the neighbour exchanges between them, and the ideal bubble.
#pragma once

#include <cstddef>
#include <vector>

namespace commbench {

struct PipelineSlot {
  bool forward = true;  // false: backward
  int micro_batch = 0;
  int chunk = 0;  // the model chunk on this stage (interleaved); virtual stage chunk x P + stage
  auto operator<=>(const PipelineSlot&) const = default;
};

// 1F1B: min(P - stage - 1, M) warm-up forwards, then one forward and one backward
// alternately, then the cool-down backwards.
std::vector<PipelineSlot> one_f_one_b_order(int stages, int stage, int micro_batches);

// Interleaved 1F1B with `chunks` model chunks per stage (Megatron's virtual pipeline):
// micro-batches go in groups of P through chunk 0, then chunk 1, ...; backward in the
// reverse chunk order. M must be a multiple of P, as Megatron requires.
std::vector<PipelineSlot> interleaved_order(int stages, int stage, int micro_batches, int chunks);

// One activation (forward) or gradient (backward) message between neighbouring stages.
struct PipelineTransfer {
  int source = 0;  // stage
  int destination = 0;
  bool gradient = false;
  int micro_batch = 0;
};

// A stage's part of the step: a compute slot, or a round of transfers it takes part in.
struct PipelineEvent {
  bool is_round = false;
  PipelineSlot slot;      // compute
  std::size_t round = 0;  // round: index into PipelinePlan::rounds
};

// Every stage's slots with the transfers between them batched into rounds: a transfer is
// sent in the round after the slot that produced it and received before the slot that
// needs it, and all stages take part in rounds in the same order, so each pair of
// neighbours matches its sends and receives as Megatron's batched isend/irecv calls do.
struct PipelinePlan {
  std::vector<std::vector<PipelineTransfer>> rounds;
  std::vector<std::vector<PipelineEvent>> stages;
  int ticks = 0;  // the step's length when every slot takes one tick
};

PipelinePlan plan_pipeline(int stages, int micro_batches, int chunks);

// The ideal bubble, the idle fraction of a stage's step: (P - 1) / (v x M + P - 1) for P
// stages, M micro-batches and v chunks per stage (v = 1: (P - 1) / (M + P - 1)).
double ideal_pipeline_bubble(int stages, int micro_batches, int chunks = 1);

}  // namespace commbench
