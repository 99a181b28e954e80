// PyTorch FullyShardedDataParallel (torch/distributed/fsdp/_runtime_utils.py,
// _limiter_utils.py, api.py), FSDP1 semantics:
// - each wrapped unit (transformer_auto_wrap_policy: one transformer block, or K blocks)
//   is all-gathered before its forward (_pre_forward_unshard); the root unit holds what
//   no unit wraps (embedding, final norm, head) and is gathered before the whole forward;
// - FULL_SHARD and HYBRID_SHARD free a unit's parameters after its forward and gather
//   them again before its backward (_pre_backward_hook); the root is not resharded after
//   forward; SHARD_GRAD_OP keeps every unit gathered until after backward;
// - after a unit's backward its gradients are reduce-scattered (_post_backward_hook,
//   _reduce_grad); HYBRID_SHARD gathers and reduce-scatters within the node and then
//   allreduces the shard across nodes; NO_SHARD allreduces;
// - forward_prefetch gathers the next unit when the current one is gathered;
//   BACKWARD_PRE gathers the next unit in backward before the current unit's gradient
//   compute, BACKWARD_POST after it (before the reduce-scatter), none when its own hook runs;
// - limit_all_gathers (the rate limiter) lets at most two all-gathers run ahead of the
//   frees: a gather waits for the reshard two frees back.
// Gradients are reduce-scattered in every micro-batch (FSDP without no_sync).
#include <algorithm>
#include <deque>
#include <map>

#include <fmt/format.h>

#include "commbench/pattern/model_tensors.hpp"
#include "data_parallel_flavour.hpp"

namespace commbench {
namespace {

struct FsdpUnit {
  bool root = false;
  std::size_t first_layer = 0;  // smallest index into StageModel::layers
  std::size_t last_layer = 0;   // largest
  std::uint64_t bytes = 0;
  int model_layer = -1;  // for labels: the first transformer block it wraps
  bool gathered = false;
  std::size_t gather_step = 0;
  std::uint64_t elements = 0;         // its parameters'
  std::uint64_t padded_elements = 0;  // each padded on its first dimension to the shards (FSDP2)
};

class FsdpFlavour : public DataParallelFlavour {
 public:
  FsdpFlavour(const PatternConfig& config, const StageModel& stage, int world_rank) : config_(config), stage_(stage) {
    const FsdpSharding sharding = config.fsdp.sharding;
    shard_group_ = sharding == FsdpSharding::hybrid_shard ? GroupRole::intra_node : GroupRole::data;
    shard_ranks_ = config.layout.group_size(shard_group_, world_rank);
    replica_ranks_ =
        sharding == FsdpSharding::hybrid_shard ? config.layout.group_size(GroupRole::inter_node, world_rank) : 1;
    reshard_after_forward_ = sharding == FsdpSharding::full_shard || sharding == FsdpSharding::hybrid_shard;
    assign_units();
  }

  void begin_pass(ScheduleWriter& writer, const PassBounds& pass) override {
    // The root's pre-forward gathers its own parameters before anything runs.
    if (!pass.backward && root_ < units_.size() && !units_[root_].gathered) gather(writer, root_, pass);
  }

  std::vector<std::size_t> before_layer(ScheduleWriter& writer, const LayerPass& pass) override {
    const std::size_t unit = unit_of_[pass.layer];
    const PassBounds bounds{pass.micro_batch, 0, pass.backward, false, false};
    if (!units_[unit].gathered) gather(writer, unit, bounds);
    const bool entering = pass.layer == (pass.backward ? units_[unit].last_layer : units_[unit].first_layer);
    if (entering) {
      const bool prefetch = pass.backward ? config_.fsdp.backward_prefetch == FsdpBackwardPrefetch::backward_pre
                                          : config_.fsdp.forward_prefetch;
      if (prefetch) prefetch_after(writer, unit, bounds);
    }
    if (!sharded()) return {};
    return {units_[unit].gather_step};
  }

  void after_layer(ScheduleWriter& writer, const LayerPass& pass, std::size_t compute_step) override {
    const std::size_t unit = unit_of_[pass.layer];
    FsdpUnit& current = units_[unit];
    const PassBounds bounds{pass.micro_batch, 0, pass.backward, false, false};
    if (!pass.backward) {
      if (pass.layer == current.last_layer && reshard_after_forward_ && !current.root) reshard(writer, unit, compute_step);
      return;
    }
    if (pass.layer != current.first_layer) return;
    if (config_.fsdp.backward_prefetch == FsdpBackwardPrefetch::backward_post) prefetch_after(writer, unit, bounds);
    reduce(writer, unit, pass, compute_step);
    reshard(writer, unit, compute_step);
  }

  std::vector<std::size_t> finish_backward(ScheduleWriter&) override { return reductions_; }

 private:
  bool sharded() const { return config_.fsdp.sharding != FsdpSharding::no_shard && shard_ranks_ > 1; }

  void assign_units() {
    const int per_unit = config_.fsdp.layers_per_unit;
    const auto shards = static_cast<std::uint64_t>(std::max(1, shard_ranks_));
    unit_of_.assign(stage_.layers.size(), 0);
    int first_block = -1;
    std::map<int, std::size_t> block_unit;  // unit of each wrapped group of blocks
    for (std::size_t index = 0; index < stage_.layers.size(); ++index) {
      const LocalLayer& layer = stage_.layers[index];
      std::size_t unit = 0;
      if (!layer.transformer || per_unit == 0) {
        if (root_ == kNoUnit) {
          root_ = units_.size();
          units_.push_back(FsdpUnit{true, index, index, 0, -1});
        }
        unit = root_;
      } else {
        if (first_block < 0) first_block = layer.layer;
        const int group = (layer.layer - first_block) / per_unit;
        if (block_unit.count(group) == 0) {
          block_unit[group] = units_.size();
          units_.push_back(FsdpUnit{false, index, index, 0, layer.layer});
        }
        unit = block_unit[group];
      }
      unit_of_[index] = unit;
      units_[unit].first_layer = std::min(units_[unit].first_layer, index);
      units_[unit].last_layer = std::max(units_[unit].last_layer, index);
      for (const std::size_t tensor : layer.tensors) {
        units_[unit].elements += stage_.tensors[tensor].elements;
        units_[unit].padded_elements += row_padded_elements(stage_.tensors[tensor], shards);
      }
    }
    for (FsdpUnit& unit : units_)
      unit.bytes = (config_.fsdp.version == 1 ? flat_padded_elements(unit.elements, shards) : unit.padded_elements) *
                   stage_.element_bytes;
    for (std::size_t unit = 0; unit < units_.size(); ++unit) {
      forward_order_.push_back(unit);
      backward_order_.push_back(unit);
    }
    std::sort(forward_order_.begin(), forward_order_.end(), [&](std::size_t left, std::size_t right) {
      return units_[left].first_layer < units_[right].first_layer;
    });
    std::sort(backward_order_.begin(), backward_order_.end(),
              [&](std::size_t left, std::size_t right) { return units_[left].last_layer > units_[right].last_layer; });
  }

  std::string unit_name(std::size_t unit) const {
    return units_[unit].root ? std::string("root unit") : fmt::format("unit of layer {}", units_[unit].model_layer);
  }

  void gather(ScheduleWriter& writer, std::size_t unit, const PassBounds& pass) {
    FsdpUnit& target = units_[unit];
    target.gathered = true;
    if (!sharded()) return;
    writer.hold_gathered(target.bytes);
    std::vector<std::size_t> waits;
    if (config_.fsdp.limit_all_gathers && frees_.size() >= 2) {
      waits.push_back(frees_.front());
      frees_.pop_front();
    }
    target.gather_step = writer.collective(Collective::allgather, shard_group_, target.bytes,
                                           {pass.backward ? StepPhase::backward : StepPhase::forward,
                                            "all-gather " + unit_name(unit), target.model_layer, pass.micro_batch},
                                           waits);
  }

  void prefetch_after(ScheduleWriter& writer, std::size_t unit, const PassBounds& pass) {
    const auto& order = pass.backward ? backward_order_ : forward_order_;
    const auto position = std::find(order.begin(), order.end(), unit);
    if (position == order.end() || position + 1 == order.end()) return;
    if (!units_[*(position + 1)].gathered) gather(writer, *(position + 1), pass);
  }

  void reshard(ScheduleWriter& writer, std::size_t unit, std::size_t compute_step) {
    units_[unit].gathered = false;
    if (!sharded()) return;
    frees_.push_back(compute_step);
    writer.release_gathered(units_[unit].bytes);
  }

  void reduce(ScheduleWriter& writer, std::size_t unit, const LayerPass& pass, std::size_t compute_step) {
    const FsdpUnit& target = units_[unit];
    const StepPlace place{StepPhase::backward, "", target.model_layer, pass.micro_batch};
    if (config_.fsdp.sharding == FsdpSharding::no_shard) {
      reductions_.push_back(writer.collective(
          Collective::allreduce, GroupRole::data, target.bytes,
          {place.phase, "allreduce " + unit_name(unit), place.layer, place.micro_batch}, {compute_step}));
      return;
    }
    std::size_t last = compute_step;
    if (shard_ranks_ > 1) {
      last = writer.collective(Collective::reducescatter, shard_group_, target.bytes,
                               {place.phase, "reduce-scatter " + unit_name(unit), place.layer, place.micro_batch},
                               {compute_step});
      reductions_.push_back(last);
    }
    if (replica_ranks_ > 1) {
      reductions_.push_back(writer.collective(
          Collective::allreduce, GroupRole::inter_node, target.bytes / static_cast<std::uint64_t>(shard_ranks_),
          {place.phase, "allreduce shard of " + unit_name(unit), place.layer, place.micro_batch}, {last}));
    }
  }

  static constexpr std::size_t kNoUnit = static_cast<std::size_t>(-1);
  const PatternConfig& config_;
  const StageModel& stage_;
  GroupRole shard_group_ = GroupRole::data;
  int shard_ranks_ = 1;
  int replica_ranks_ = 1;
  bool reshard_after_forward_ = true;
  std::vector<FsdpUnit> units_;
  std::vector<std::size_t> unit_of_;
  std::size_t root_ = kNoUnit;
  std::vector<std::size_t> forward_order_;
  std::vector<std::size_t> backward_order_;
  std::deque<std::size_t> frees_;
  std::vector<std::size_t> reductions_;
};

}  // namespace

std::unique_ptr<DataParallelFlavour> make_fsdp_flavour(const PatternConfig& config, const StageModel& stage,
                                                       int world_rank) {
  return std::make_unique<FsdpFlavour>(config, stage, world_rank);
}

}  // namespace commbench
