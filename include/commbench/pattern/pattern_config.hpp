// What bench-patterns is asked to run: the model, the framework and its settings, the
// parallel layout and the compute that stands in for the model. Filled from the command
// line (pattern_flags.hpp) and the user's own framework files, then turned into each
// rank's schedule by build_schedule().
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "commbench/core/dtype.hpp"
#include "commbench/core/peer_distribution.hpp"
#include "commbench/pattern/framework_settings.hpp"
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
  // Known for presets (their config.json); 0 when not given. Without hidden, each layer
  // counts as one parameter tensor; without vocabulary, what the layers do not hold is
  // the embedding and output head (model_tensors.hpp).
  int vocabulary = 0;
  int attention_heads = 0;
  int kv_heads = 0;  // grouped-query attention; 0: as many as attention_heads
  bool tied_embeddings = false;
  int shared_experts = 0;  // MoE: experts every token passes through besides its top_k
};

struct ScheduleFile;

// Every setting the schedules read. Field names follow the frameworks' own keys.
struct PatternConfig {
  PatternKind kind = PatternKind::ddp;
  // --schedule: the step comes from this file, not from the model and framework below
  // (which are then unused); the layout still says which ranks form each group.
  std::shared_ptr<const ScheduleFile> schedule_file;
  ModelShape model;
  ParallelLayout layout;
  // Each framework's settings, named as the framework names them (docs/patterns.md).
  DdpSettings ddp;
  FsdpSettings fsdp;
  ZeroSettings zero;
  PipelineSettings pipeline;
  TensorParallelSettings tensor_parallel;
  ComputeSettings compute;
  // MoE routing: how each rank's tokens split over the expert group in dispatch/combine.
  PeerDistribution routing;

  // The data-parallel flavour the step reduces gradients with: the kind itself for
  // ddp/fsdp/zero*, DDP (Megatron's) for the model-parallel kinds.
  PatternKind data_parallel_kind() const;
  // DeepSpeed's stage (1..3) for zero kinds, 0 otherwise.
  int zero_stage() const;
  // Pipeline micro-batches per step (M), resolved from PipelineSettings::micro_batches.
  int micro_batches() const;
};

// UsageError (one line, naming the flag or ds_config key) when `config` asks for what the
// frameworks cannot do: a layout that does not fit the model (--pp above the layers,
// --ep not dividing --experts), ZeRO-2/3 under a pipeline (DeepSpeed's pipeline engine
// takes stage 0 or 1), ZeRO-3 or FSDP with expert parallelism, an interleaved pipeline
// whose micro-batches are not a multiple of the stages, hpZ outside stage 3 or not the
// node's data-parallel ranks.
void validate_pattern_config(const PatternConfig& config);

// What the step is called in reports and trace titles: the pattern's name, or "schedule"
// for a step read with --schedule.
std::string pattern_name(const PatternConfig& config);

// The schedule `world_rank` runs for one training step under `config` (validated first);
// with a schedule file, that file's schedule of the rank.
RankSchedule build_schedule(const PatternConfig& config, int world_rank);

}  // namespace commbench
