#include <fmt/format.h>

#include "commbench/core/error.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/pattern/pattern_config.hpp"
#include "commbench/pattern/schedule_file.hpp"
#include "step_composer.hpp"

namespace commbench {

PatternKind PatternConfig::data_parallel_kind() const {
  switch (kind) {
    case PatternKind::pipeline:
    case PatternKind::tp:
    case PatternKind::ep: return PatternKind::ddp;
    default: return kind;
  }
}

int PatternConfig::zero_stage() const {
  switch (kind) {
    case PatternKind::zero1: return 1;
    case PatternKind::zero2: return 2;
    case PatternKind::zero3: return 3;
    default: return 0;
  }
}

int PatternConfig::micro_batches() const {
  if (layout.pipeline > 1 && pipeline.micro_batches > 0) return pipeline.micro_batches;
  if (layout.pipeline > 1 && model.gradient_accumulation <= 1) return 2 * layout.pipeline;
  return model.gradient_accumulation;
}

void validate_pattern_config(const PatternConfig& config) {
  const ParallelLayout& layout = config.layout;
  layout.validate(layout.ranks());
  const ModelShape& model = config.model;
  const int chunks = config.pipeline.virtual_stages;
  if (chunks < 1) throw UsageError(fmt::format("--interleave {}: must be at least 1", chunks));
  if (layout.pipeline * chunks > model.layers)
    throw UsageError(fmt::format("--pp {}{}: more pipeline stages than the model's {} layers", layout.pipeline,
                                 chunks > 1 ? fmt::format(" x --interleave {}", chunks) : "", model.layers));
  if (model.experts > 1 && model.experts % layout.expert != 0)
    throw UsageError(fmt::format("--ep {}: must divide --experts {}", layout.expert, model.experts));
  if (model.experts <= 1 && layout.expert > 1)
    throw UsageError(fmt::format("--ep {}: the model has no experts (--experts)", layout.expert));
  if (model.top_k < 1 || (model.experts > 1 && model.top_k > model.experts))
    throw UsageError(fmt::format("--top-k {}: must be between 1 and --experts {}", model.top_k, model.experts));
  const PatternKind flavour = config.data_parallel_kind();
  if (layout.pipeline > 1 && (flavour == PatternKind::zero2 || flavour == PatternKind::zero3))
    throw UsageError(fmt::format("--pp {}: DeepSpeed's pipeline engine runs ZeRO stage 0 or 1 only, not --pattern {}",
                                 layout.pipeline, name_of(config.kind)));
  if (layout.expert > 1 && (flavour == PatternKind::zero3 || flavour == PatternKind::fsdp))
    throw UsageError(
        fmt::format("--ep {}: expert parallelism is not modelled with --pattern {} (use ddp, zero1, zero2)",
                    layout.expert, name_of(config.kind)));
  if (chunks > 1) {
    if (layout.pipeline == 1) throw UsageError("--interleave: needs a pipeline (--pp above 1)");
    if (config.micro_batches() % layout.pipeline != 0)
      throw UsageError(fmt::format("--micro-batches {}: must be a multiple of --pp {} with --interleave",
                                   config.micro_batches(), layout.pipeline));
  }
  const int hpz = config.zero.zero_hpz_partition_size;
  if (hpz < 1) throw UsageError(fmt::format("zero_optimization.zero_hpz_partition_size {}: must be at least 1", hpz));
  if (hpz > 1) {
    if (config.zero_stage() != 3)
      throw UsageError(fmt::format("zero_optimization.zero_hpz_partition_size {}: hpZ needs ZeRO stage 3, not {}", hpz,
                                   name_of(config.kind)));
    const int node_ranks = layout.group_size(GroupRole::intra_node, 0);
    if (hpz != node_ranks)
      throw UsageError(
          fmt::format("zero_optimization.zero_hpz_partition_size {}: must be the data-parallel ranks on a node ({})",
                      hpz, node_ranks));
  }
  if (config.compute.tflops <= 0) throw UsageError(fmt::format("--tflops {}: must be positive", config.compute.tflops));
  if (config.compute.scale < 0)
    throw UsageError(fmt::format("--compute-scale {}: must not be negative", config.compute.scale));
}

namespace {

// A stand-in compute longer than an hour is a typo or an overflow (--compute-ms 1e20,
// --tflops 1e-30), not a training step; a schedule file's compute has the same bound.
void refuse_endless_compute(const RankSchedule& schedule) {
  constexpr double kMostSeconds = 3600;
  for (const ScheduleStep& step : schedule.steps)
    if (step.kind == StepKind::compute && !(step.compute_seconds <= kMostSeconds))
      throw UsageError(fmt::format(
          "--compute-ms, --tflops, --compute-scale: {} would compute for {} s, more than an hour; give a step's "
          "real compute",
          step.label, significant_text(step.compute_seconds, 3)));
}

}  // namespace

std::string pattern_name(const PatternConfig& config) {
  return config.schedule_file ? std::string("schedule") : std::string(name_of(config.kind));
}

RankSchedule build_schedule(const PatternConfig& config, int world_rank) {
  if (config.schedule_file) config.layout.validate(config.layout.ranks());
  else validate_pattern_config(config);
  if (world_rank < 0 || world_rank >= config.layout.ranks())
    throw UsageError(fmt::format("rank {}: outside the layout's {} ranks", world_rank, config.layout.ranks()));
  if (config.schedule_file) return config.schedule_file->for_rank(world_rank, config.layout.ranks());
  RankSchedule schedule = compose_step(config, world_rank);
  refuse_endless_compute(schedule);
  return schedule;
}

}  // namespace commbench
