// What bench-patterns is asked to run: the model, the framework and its settings, the
// parallel layout and the compute that stands in for the model. Filled from the command
// line (pattern_flags.hpp) and the user's own framework files, then turned into each
// rank's schedule by build_schedule().
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "commbench/core/dtype.hpp"
#include "commbench/core/peer_distribution.hpp"
#include "commbench/pattern/parallel_layout.hpp"
#include "commbench/pattern/schedule.hpp"

namespace commbench {

// The data-parallel flavour, or a model-parallel pattern on its own.
enum class PatternKind { ddp, fsdp, zero1, zero2, zero3, pipeline, tp, ep };
std::string_view name_of(PatternKind kind);
// UsageError naming `flag` and listing the accepted names otherwise.
PatternKind parse_pattern_kind(std::string_view text, std::string_view flag);

// The transformer the step trains (dense, or MoE when experts > 1).
struct ModelShape {
  std::string name;       // the preset's name, or "custom"
  double parameters = 0;  // total parameters
  int layers = 0;
  int hidden = 0;
  int ffn = 0;          // feed-forward inner size
  int sequence = 0;     // tokens per sample
  int micro_batch = 1;  // samples per micro-batch per data-parallel rank
  int gradient_accumulation = 1;
  DataType dtype = DataType::bfloat16;
  int experts = 1;  // 1: dense
  int top_k = 1;
};

// Every setting the schedules read. Field names follow the frameworks' own keys.
struct PatternConfig {
  PatternKind kind = PatternKind::ddp;
  ModelShape model;
  ParallelLayout layout;
  // DDP, FSDP, ZeRO, pipeline, MoE routing and compute settings follow here, each named
  // as its framework names it (docs/patterns.md).
};

// The schedule `world_rank` runs for one training step under `config`.
RankSchedule build_schedule(const PatternConfig& config, int world_rank);

}  // namespace commbench
