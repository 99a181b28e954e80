// PyTorch DistributedDataParallel (torch/nn/parallel/distributed.py and
// torch/csrc/distributed/c10d/reducer.cpp), in its steady state after the first
// iteration's Reducer::rebuild_buckets: gradients are bucketed in the order they become
// ready in backward (the reverse of definition order), the first bucket capped as
// first_bucket_cap_mb() says (1 MiB unless bucket_cap_mb was given), the others at bucket_cap_mb; a tensor joins the
// open bucket and the bucket closes once it reaches its cap (compute_bucket_assignment_by_size). Buckets are allreduced
// in bucket order as soon as all their gradients are ready (Reducer::mark_bucket_ready), only in the last micro-batch's
// backward (no_sync before it), and the optimizer waits for all of them (finalize_backward). With broadcast_buffers,
// the module buffers are broadcast from rank 0 before the step's first forward (DistributedDataParallel._pre_forward,
// will_sync_module_buffers).
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "data_parallel_flavour.hpp"

namespace commbench {
namespace {

constexpr double kMebibyte = 1024.0 * 1024.0;

struct GradientBucket {
  GroupRole group = GroupRole::data;
  std::vector<std::size_t> tensors;
  std::uint64_t bytes = 0;
  std::size_t pending = 0;      // gradients not ready yet this step
  std::size_t first_ready = 0;  // position in ready order: buckets are reduced in this order
};

class DdpFlavour : public DataParallelFlavour {
 public:
  DdpFlavour(const PatternConfig& config, const StageModel& stage) : config_(config), stage_(stage) {
    assign_buckets();
    // Hugging Face's Llama-style models register one buffer per rotary embedding,
    // inv_freq: head_dim / 2 float32 values.
    const ModelShape& model = config.model;
    if (model.attention_heads > 0 && model.hidden > 0 && config.ddp.broadcast_buffers)
      buffer_bytes_ = static_cast<std::uint64_t>(model.hidden / model.attention_heads / 2) * 4;
  }

  // Buffers are broadcast before a forward only when the forward before it synchronised
  // its gradients (require_forward_param_sync, set at the end of each forward): with
  // no_sync accumulation, the step's first micro-batch alone.
  void begin_pass(ScheduleWriter& writer, const PassBounds& pass) override {
    if (pass.backward || buffer_bytes_ == 0 || pass.chunk != 0 || pass.micro_batch != 0) return;
    const std::size_t step = writer.collective(Collective::broadcast, GroupRole::data, buffer_bytes_,
                                               {StepPhase::forward, "module buffers", -1, pass.micro_batch});
    writer.block_compute_on(step);
    steps_.push_back(step);
  }

  void after_layer(ScheduleWriter& writer, const LayerPass& pass, std::size_t compute_step) override {
    if (!pass.backward || !pass.last_micro_batch) return;
    for (const std::size_t tensor : stage_.layers[pass.layer].tensors) --buckets_[bucket_of_.at(tensor)].pending;
    while (next_bucket_ < buckets_.size() && buckets_[next_bucket_].pending == 0) {
      const GradientBucket& bucket = buckets_[next_bucket_];
      steps_.push_back(writer.collective(Collective::allreduce, bucket.group, bucket.bytes,
                                         {StepPhase::backward, fmt::format("bucket {}", next_bucket_),
                                          stage_.layers[pass.layer].layer, pass.micro_batch},
                                         {compute_step}));
      ++next_bucket_;
    }
  }

  std::vector<std::size_t> finish_backward(ScheduleWriter&) override { return steps_; }

 private:
  void assign_buckets() {
    const std::uint64_t first_cap = static_cast<std::uint64_t>(first_bucket_cap_mb(config_.ddp) * kMebibyte);
    const std::uint64_t cap = static_cast<std::uint64_t>(config_.ddp.bucket_cap_mb * kMebibyte);
    // Ready order: layers in reverse, and within a layer its tensors in reverse.
    std::vector<std::size_t> ready;
    for (auto layer = stage_.layers.rbegin(); layer != stage_.layers.rend(); ++layer)
      ready.insert(ready.end(), layer->tensors.rbegin(), layer->tensors.rend());
    // One open bucket per group (the Reducer keys buckets by dtype and device; experts
    // reduce over their own group), each with its own run of caps.
    std::map<GroupRole, GradientBucket> open;
    std::map<GroupRole, bool> first_done;
    for (std::size_t position = 0; position < ready.size(); ++position) {
      const std::size_t tensor = ready[position];
      const GroupRole group = reduction_group(config_, stage_.tensors[tensor]);
      GradientBucket& bucket = open[group];
      if (bucket.tensors.empty()) {
        bucket.group = group;
        bucket.first_ready = position;
      }
      bucket.tensors.push_back(tensor);
      bucket.bytes += stage_.bytes_of(tensor);
      const std::uint64_t limit = first_done[group] ? cap : first_cap;
      if (bucket.bytes >= limit) {
        buckets_.push_back(std::move(bucket));
        bucket = GradientBucket{};
        first_done[group] = true;
      }
    }
    for (auto& [group, bucket] : open)
      if (!bucket.tensors.empty()) buckets_.push_back(std::move(bucket));
    std::stable_sort(buckets_.begin(), buckets_.end(), [](const GradientBucket& left, const GradientBucket& right) {
      return left.first_ready < right.first_ready;
    });
    for (std::size_t index = 0; index < buckets_.size(); ++index) {
      buckets_[index].pending = buckets_[index].tensors.size();
      for (const std::size_t tensor : buckets_[index].tensors) bucket_of_[tensor] = index;
    }
  }

  const PatternConfig& config_;
  const StageModel& stage_;
  std::vector<GradientBucket> buckets_;
  std::map<std::size_t, std::size_t> bucket_of_;
  std::size_t next_bucket_ = 0;
  std::uint64_t buffer_bytes_ = 0;
  std::vector<std::size_t> steps_;
};

}  // namespace

std::unique_ptr<DataParallelFlavour> make_ddp_flavour(const PatternConfig& config, const StageModel& stage, int) {
  return std::make_unique<DdpFlavour>(config, stage);
}

}  // namespace commbench
