// Walks one training step as one rank runs it: micro-batches (gradient accumulation, or
// the pipeline's 1F1B order with its neighbour exchanges), each layer's forward and
// backward compute with Megatron's tensor-parallel and MoE expert-parallel collectives
// inside it, the data-parallel flavour's hooks around it, and the optimizer step.
#pragma once

#include "commbench/pattern/pattern_config.hpp"
#include "commbench/pattern/schedule.hpp"

namespace commbench {

// build_schedule's work; `config` is validated by the caller.
RankSchedule compose_step(const PatternConfig& config, int world_rank);

}  // namespace commbench
