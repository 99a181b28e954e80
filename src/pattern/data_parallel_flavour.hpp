// How a data-parallel framework (DDP, FSDP, ZeRO-1/2/3) hooks into the step: what it
// communicates before and after each layer's forward and backward compute, at the end of
// backward and after the optimizer. The step composer (step_composer.hpp) walks the
// layers, micro-batches and pipeline slots; a flavour only adds its own collectives, the
// way the framework's module hooks do.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "commbench/pattern/pattern_config.hpp"
#include "schedule_writer.hpp"
#include "stage_model.hpp"

namespace commbench {

// One layer's forward or backward compute of one micro-batch.
struct LayerPass {
  std::size_t layer = 0;  // index into StageModel::layers
  int micro_batch = 0;
  bool backward = false;
  bool first_micro_batch = false;
  bool last_micro_batch = false;  // this stage's last forward/backward of the step for this layer
};

// A micro-batch's forward or backward through the layers of one chunk.
struct PassBounds {
  int micro_batch = 0;
  int chunk = 0;
  bool backward = false;
  bool first_micro_batch = false;
  bool last_micro_batch = false;
};

class DataParallelFlavour {
 public:
  virtual ~DataParallelFlavour() = default;
  virtual void begin_pass(ScheduleWriter& writer, const PassBounds& pass);
  // Issued before the layer's compute; the compute waits for the returned steps.
  virtual std::vector<std::size_t> before_layer(ScheduleWriter& writer, const LayerPass& pass);
  // After the layer's compute, whose last step is `compute_step` (gradients ready in backward).
  virtual void after_layer(ScheduleWriter& writer, const LayerPass& pass, std::size_t compute_step);
  virtual void end_pass(ScheduleWriter& writer, const PassBounds& pass);
  // After this stage's last backward: the steps the optimizer step waits for.
  virtual std::vector<std::size_t> finish_backward(ScheduleWriter& writer);
  virtual void after_optimizer(ScheduleWriter& writer, std::size_t optimizer_step);
};

// The flavour `config` asks for, seeing `stage` from `world_rank`; a flavour that
// communicates nothing when the data-parallel group is one rank.
std::unique_ptr<DataParallelFlavour> make_data_parallel_flavour(const PatternConfig& config, const StageModel& stage,
                                                                int world_rank);

// Each flavour's factory (one file each).
std::unique_ptr<DataParallelFlavour> make_ddp_flavour(const PatternConfig& config, const StageModel& stage,
                                                      int world_rank);
std::unique_ptr<DataParallelFlavour> make_fsdp_flavour(const PatternConfig& config, const StageModel& stage,
                                                       int world_rank);
std::unique_ptr<DataParallelFlavour> make_zero_flavour(const PatternConfig& config, const StageModel& stage,
                                                       int world_rank);
std::unique_ptr<DataParallelFlavour> make_zero3_flavour(const PatternConfig& config, const StageModel& stage,
                                                        int world_rank);

// The group a tensor's gradient is reduced over: routed experts over the ranks holding the
// same experts, everything else over the data-parallel group.
GroupRole reduction_group(const PatternConfig& config, const ParameterTensor& tensor);

}  // namespace commbench
