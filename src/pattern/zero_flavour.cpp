// DeepSpeed ZeRO stage 1 and 2 (deepspeed/runtime/zero/stage_1_and_2.py, engine.py):
// - gradients go into an "ipg" bucket of reduce_bucket_size elements, in the order their
//   hooks fire in backward; a gradient that would overflow the bucket first reduces it
//   (reduce_independent_p_g_buckets_and_remove_grads), and the rest is reduced at the end
//   of backward (overlapping_partition_gradients_reduce_epilogue);
// - stage 2 (partition_gradients), and stage 1 with overlap_comm, reduce this way in every
//   micro-batch's backward; stage 1 without overlap_comm reduces once at the gradient
//   accumulation boundary, after backward, in definition order (reduce_gradients);
// - each bucket is allreduced whole (reduce_scatter=false, or use_multi_rank_bucket_allreduce,
//   on by default: a bucket spanning several ranks' partitions; average_tensor), or else
//   reduced to its owners (counted here as one reduce-scatter of the bucket: the same
//   bytes); with overlap_comm on the reduction stream, else the compute waits for it;
// - the optimizer step all-reduces the gradient norm, one float32 (get_grad_norm_direct);
// - after the optimizer step each rank's updated partition is all-gathered
//   (all_gather_dp_groups), in shards so that each gathers about allgather_bucket_size
//   elements.
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "data_parallel_flavour.hpp"

namespace commbench {
namespace {

struct ReduceBucket {
  std::uint64_t elements = 0;
  std::uint64_t bytes = 0;
};

class ZeroFlavour : public DataParallelFlavour {
 public:
  ZeroFlavour(const PatternConfig& config, const StageModel& stage)
      : config_(config),
        stage_(stage),
        stage_number_(config.zero_stage()),
        overlap_(config.zero.overlaps(stage_number_)),
        in_backward_(stage_number_ == 2 || overlap_) {}

  void after_layer(ScheduleWriter& writer, const LayerPass& pass, std::size_t compute_step) override {
    if (!pass.backward || !in_backward_) return;
    if (stage_number_ == 1 && !pass.last_micro_batch) return;  // reduced at the boundary only
    const auto& tensors = stage_.layers[pass.layer].tensors;
    for (auto tensor = tensors.rbegin(); tensor != tensors.rend(); ++tensor)
      add_gradient(writer, *tensor, compute_step, pass);
  }

  void end_pass(ScheduleWriter& writer, const PassBounds& pass) override {
    if (!pass.backward || !in_backward_) return;
    if (stage_number_ == 1 && !pass.last_micro_batch) return;
    flush_all(writer, StepPlace{StepPhase::backward, "", -1, pass.micro_batch});
  }

  std::vector<std::size_t> finish_backward(ScheduleWriter& writer) override {
    if (!in_backward_) {
      // Stage 1 without overlap_comm: every gradient, in definition order, after backward.
      const std::size_t last = writer.last_compute();
      const int last_micro_batch = config_.micro_batches() - 1;
      for (std::size_t tensor = 0; tensor < stage_.tensors.size(); ++tensor)
        add_gradient(writer, tensor, last, {0, last_micro_batch, true, false, true});
      flush_all(writer, StepPlace{StepPhase::backward, "", -1, last_micro_batch});
    }
    const std::size_t norm = writer.collective(Collective::allreduce, GroupRole::data, size_of(DataType::float32),
                                               {StepPhase::optimizer, "gradient norm"}, steps_);
    writer.set_dtype(norm, DataType::float32);
    return {norm};
  }

  void after_optimizer(ScheduleWriter& writer, std::size_t optimizer_step) override {
    std::map<GroupRole, std::uint64_t> elements;
    for (const ParameterTensor& tensor : stage_.tensors) elements[reduction_group(config_, tensor)] += tensor.elements;
    for (const auto& [group, total] : elements) {
      const std::uint64_t shards =
          std::max<std::uint64_t>(1, total / std::max<std::uint64_t>(config_.zero.allgather_bucket_size, 1));
      for (std::uint64_t shard = 0; shard < shards; ++shard) {
        const std::uint64_t shard_elements = total / shards + (shard + 1 == shards ? total % shards : 0);
        writer.collective(Collective::allgather, group, shard_elements * stage_.element_bytes,
                          {StepPhase::optimizer, fmt::format("updated partitions {}", shard)}, {optimizer_step});
      }
    }
  }

 private:
  void add_gradient(ScheduleWriter& writer, std::size_t tensor, std::size_t compute_step, const LayerPass& pass) {
    const GroupRole group = reduction_group(config_, stage_.tensors[tensor]);
    ReduceBucket& bucket = open_[group];
    const std::uint64_t elements = stage_.tensors[tensor].elements;
    if (bucket.elements > 0 && bucket.elements + elements > config_.zero.reduce_bucket_size)
      reduce(writer, group, {StepPhase::backward, "", stage_.tensors[tensor].layer, pass.micro_batch}, compute_step);
    bucket.elements += elements;
    bucket.bytes += stage_.bytes_of(tensor);
    waits_[group] = compute_step;
  }

  void flush_all(ScheduleWriter& writer, const StepPlace& place) {
    for (auto& [group, bucket] : open_)
      if (bucket.elements > 0) reduce(writer, group, place, waits_[group]);
  }

  void reduce(ScheduleWriter& writer, GroupRole group, StepPlace place, std::size_t compute_step) {
    ReduceBucket& bucket = open_[group];
    place.label = fmt::format("reduce bucket {}", buckets_++);
    const bool whole = !config_.zero.reduce_scatter || config_.zero.use_multi_rank_bucket_allreduce;
    const Collective op = whole ? Collective::allreduce : Collective::reducescatter;
    const std::size_t step = writer.collective(op, group, bucket.bytes, place, {compute_step});
    if (!overlap_) writer.block_compute_on(step);
    steps_.push_back(step);
    bucket = ReduceBucket{};
  }

  const PatternConfig& config_;
  const StageModel& stage_;
  int stage_number_;
  bool overlap_;
  bool in_backward_;
  std::map<GroupRole, ReduceBucket> open_;
  std::map<GroupRole, std::size_t> waits_;
  std::size_t buckets_ = 0;
  std::vector<std::size_t> steps_;
};

}  // namespace

std::unique_ptr<DataParallelFlavour> make_zero_flavour(const PatternConfig& config, const StageModel& stage, int) {
  return std::make_unique<ZeroFlavour>(config, stage);
}

}  // namespace commbench
