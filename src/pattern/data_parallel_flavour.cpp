#include "data_parallel_flavour.hpp"

namespace commbench {

void DataParallelFlavour::begin_pass(ScheduleWriter&, const PassBounds&) {}
std::vector<std::size_t> DataParallelFlavour::before_layer(ScheduleWriter&, const LayerPass&) { return {}; }
void DataParallelFlavour::after_layer(ScheduleWriter&, const LayerPass&, std::size_t) {}
void DataParallelFlavour::end_pass(ScheduleWriter&, const PassBounds&) {}
std::vector<std::size_t> DataParallelFlavour::finish_backward(ScheduleWriter&) { return {}; }
void DataParallelFlavour::after_optimizer(ScheduleWriter&, std::size_t) {}

GroupRole reduction_group(const PatternConfig& config, const ParameterTensor& tensor) {
  return tensor.expert >= 0 && config.layout.expert > 1 ? GroupRole::expert_data : GroupRole::data;
}

std::unique_ptr<DataParallelFlavour> make_data_parallel_flavour(const PatternConfig& config, const StageModel& stage,
                                                                int world_rank) {
  // A data-parallel group of one rank has nothing to reduce or gather.
  if (config.layout.data == 1) return std::make_unique<DataParallelFlavour>();
  switch (config.data_parallel_kind()) {
    case PatternKind::fsdp: return make_fsdp_flavour(config, stage, world_rank);
    case PatternKind::zero1:
    case PatternKind::zero2: return make_zero_flavour(config, stage, world_rank);
    case PatternKind::zero3: return make_zero3_flavour(config, stage, world_rank);
    default: return make_ddp_flavour(config, stage, world_rank);
  }
}

}  // namespace commbench
