// DeepSpeed ZeRO stage 3 (deepspeed/runtime/zero/stage3.py,
// partitioned_param_coordinator.py, parameter_offload.py):
// - parameters with at most stage3_param_persistence_threshold elements stay whole on
//   every rank (ds_persist), up to stage3_model_persistence_threshold in all; the others
//   are all-gathered when their module runs (fetch_sub_module), in forward and again in
//   backward;
// - the coordinator knows the step's trace as a queue of parameter uses; each fetch takes
//   the module's own uses off it, then prefetches: it takes further uses off the queue
//   until those not gathered yet fill stage3_prefetch_bucket_size elements (or the room
//   left under stage3_max_live_parameters), and gathers them in one call;
// - after a module runs its parameters are released, unless a later use of theirs was
//   taken off the queue while they were gathered (the prefetcher skipped it), or the
//   trace uses them again within stage3_max_reuse_distance elements (__params_to_release);
// - after backward the gradient norm is all-reduced (one fp64, every step); after the
//   optimizer step every persistent parameter is all-gathered again, one call each;
// - gradients are reduce-scattered in reduce_bucket_size buckets as their hooks fire
//   (__add_grad_to_ipg_bucket, __reduce_and_partition_ipg_grads), every micro-batch; with
//   overlap_comm (on by default for stage 3) on its own stream, else the compute waits;
// - with zero_hpz_partition_size > 1 (ZeRO++ hpZ) the backward fetches gather from the
//   secondary partition within the node.
// Modules are the leaf modules (one per weight; a MoE layer's experts are one module) and
// the containers above them (a layer, its attention, its MLP; named by the weights'
// prefixes, as Hugging Face nests them), which own no parameter but are trace steps all the
// same: their fetches run the prefetch loop, so the prefetcher reaches backward's uses
// while forward runs. A Llama-shaped model also calls its rotary embedding (no parameter)
// after the token embedding. A layer's compute waits for all of its modules' parameters.
// The trace is one micro-batch's forward and backward: the coordinator starts over each
// micro-batch.
#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>

#include "commbench/pattern/model_tensors.hpp"
#include "data_parallel_flavour.hpp"

namespace commbench {
namespace {

struct LeafModule {
  std::vector<std::size_t> tensors;
  std::uint64_t elements = 0;
};

struct TracePosition {
  std::size_t module = 0;
  bool backward = false;
};

// One use of a parameter in the trace: the coordinator's __ParamInTrace.
struct QueuedUse {
  std::size_t tensor = 0;
  long long step = 0;  // the trace position that uses it
};

// "layers.3.mlp.up_proj" -> its module is the weight's owner; experts share one module.
std::string module_name(const ParameterTensor& tensor) {
  const std::size_t experts = tensor.name.find(".experts.");
  if (experts != std::string::npos) return tensor.name.substr(0, experts + 8);
  return tensor.name;
}

// The containers above a module, outermost first: "layers.3.mlp.up_proj" -> "layers.3",
// "layers.3.mlp". A name followed by an index ("layers") is a list, which never runs.
std::vector<std::string> containers_of(const std::string& module) {
  std::vector<std::string> parts;
  for (std::size_t begin = 0;;) {
    const std::size_t dot = module.find('.', begin);
    parts.push_back(module.substr(begin, dot == std::string::npos ? std::string::npos : dot - begin));
    if (dot == std::string::npos) break;
    begin = dot + 1;
  }
  const auto index = [](const std::string& part) {
    return !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  std::vector<std::string> containers;
  std::string prefix;
  for (std::size_t k = 0; k + 1 < parts.size(); ++k) {
    prefix += (k ? "." : "") + parts[k];
    if (!index(parts[k + 1])) containers.push_back(prefix);
  }
  return containers;
}

class Zero3Flavour : public DataParallelFlavour {
 public:
  Zero3Flavour(const PatternConfig& config, const StageModel& stage, int world_rank)
      : config_(config), stage_(stage), data_ranks_(config.layout.group_size(GroupRole::data, world_rank)) {
    const ZeroSettings& zero = config.zero;
    persistent_.assign(stage.tensors.size(), false);
    std::uint64_t persisted = 0;
    for (std::size_t tensor = 0; tensor < stage.tensors.size(); ++tensor) {
      const std::uint64_t elements = stage.tensors[tensor].elements;
      if (elements <= zero.stage3_param_persistence_threshold &&
          persisted + elements <= zero.stage3_model_persistence_threshold) {
        persistent_[tensor] = true;
        persisted += elements;
      }
    }
    // Leaf modules per layer, in definition order.
    layer_modules_.resize(stage.layers.size());
    for (std::size_t layer = 0; layer < stage.layers.size(); ++layer) {
      std::map<std::string, std::size_t> by_name;
      for (const std::size_t tensor : stage.layers[layer].tensors) {
        const std::string name = module_name(stage.tensors[tensor]);
        auto found = by_name.find(name);
        if (found == by_name.end()) {
          found = by_name.emplace(name, modules_.size()).first;
          modules_.emplace_back();
          module_names_.push_back(name);
          layer_modules_[layer].push_back(found->second);
        }
        modules_[found->second].tensors.push_back(tensor);
        modules_[found->second].elements += stage.tensors[tensor].elements;
      }
    }
    // The trace: forward through the modules, backward through them in reverse, each
    // container just before the first of its modules (forward hooks run outside in, and
    // backward's run as the gradient reaches a container's output first). Both passes
    // start with the whole model's own hook, a module of no parameters of its own: the
    // first fetch of a step is the root's, so what it prefetches (the embedding first)
    // is gathered in one call, and the last forward module is not backward's first step.
    const std::size_t model_module = modules_.size();
    modules_.emplace_back();
    module_names_.emplace_back();
    model_forward_position_ = trace_.size();
    trace_.push_back({model_module, false});
    forward_positions_.resize(stage.layers.size());
    backward_positions_.resize(stage.layers.size());
    std::set<std::string> entered;
    for (std::size_t layer = 0; layer < stage.layers.size(); ++layer)
      for (const std::size_t module : layer_modules_[layer]) {
        enter(module, false, forward_positions_[layer], entered);
        if (module_names_[module] == "embed_tokens") {  // the rotary embedding runs next
          forward_positions_[layer].push_back(trace_.size());
          trace_.push_back({container_module("rotary_emb"), false});
        }
      }
    model_backward_position_ = trace_.size();
    trace_.push_back({model_module, true});
    entered.clear();
    for (std::size_t layer = stage.layers.size(); layer-- > 0;)
      for (auto module = layer_modules_[layer].rbegin(); module != layer_modules_[layer].rend(); ++module)
        enter(*module, true, backward_positions_[layer], entered);
    // The parameter queue: every use of every parameter, in trace order.
    for (std::size_t position = 0; position < trace_.size(); ++position)
      for (const std::size_t tensor : modules_[trace_[position].module].tensors)
        queue_.push_back({tensor, static_cast<long long>(position)});
    available_.assign(stage.tensors.size(), false);
    gathered_by_.assign(stage.tensors.size(), 0);
  }

  void begin_pass(ScheduleWriter& writer, const PassBounds& pass) override {
    if (pass.backward) {
      fetch(writer, model_backward_position_, {0, pass.micro_batch, true, false, false});
      return;
    }
    // reset_step: the queue starts over; nothing is gathered but what persists.
    for (std::size_t tensor = 0; tensor < available_.size(); ++tensor)
      if (available_[tensor]) writer.release_gathered(padded_bytes(tensor));
    std::fill(available_.begin(), available_.end(), false);
    live_elements_ = 0;
    queue_position_ = 0;
    last_use_taken_.assign(stage_.tensors.size(), std::numeric_limits<long long>::min());
    fetch(writer, model_forward_position_, {0, pass.micro_batch, false, false, false});
  }

  std::vector<std::size_t> before_layer(ScheduleWriter& writer, const LayerPass& pass) override {
    // Module by module as the hooks run: a module's parameters are released when it is
    // done, before the next module's fetch runs the prefetch loop (which then sees them
    // gone). The layer's compute is one step, waiting for all of them.
    const auto& positions = pass.backward ? backward_positions_[pass.layer] : forward_positions_[pass.layer];
    for (const std::size_t position : positions) {
      fetch(writer, position, pass);
      release(writer, position);
    }
    std::vector<std::size_t> waits;
    for (const std::size_t tensor : stage_.layers[pass.layer].tensors)
      if (!persistent_[tensor]) waits.push_back(gathered_by_[tensor]);
    return waits;
  }

  void after_layer(ScheduleWriter& writer, const LayerPass& pass, std::size_t compute_step) override {
    if (!pass.backward) return;
    const auto& tensors = stage_.layers[pass.layer].tensors;
    for (auto tensor = tensors.rbegin(); tensor != tensors.rend(); ++tensor) {
      const std::uint64_t elements = stage_.tensors[*tensor].elements;
      if (bucket_elements_ > 0 && bucket_elements_ + elements > config_.zero.reduce_bucket_size)
        reduce(writer, {StepPhase::backward, "", stage_.tensors[*tensor].layer, pass.micro_batch}, compute_step);
      bucket_elements_ += elements;
      bucket_bytes_ += padded_bytes(*tensor);
      bucket_ready_ = compute_step;
    }
  }

  void end_pass(ScheduleWriter& writer, const PassBounds& pass) override {
    if (pass.backward && bucket_elements_ > 0)
      reduce(writer, {StepPhase::backward, "", -1, pass.micro_batch}, bucket_ready_);
  }

  // The optimizer step's gradient norm (get_grad_norm_direct): one fp64 all-reduce over
  // the data group every step, clipping or not, once the reduce-scatters are done.
  std::vector<std::size_t> finish_backward(ScheduleWriter& writer) override {
    const std::size_t norm = writer.collective(Collective::allreduce, GroupRole::data, size_of(DataType::float64),
                                               {StepPhase::optimizer, "gradient norm"}, reductions_);
    writer.set_dtype(norm, DataType::float64);
    return {norm};
  }

  // A parameter as ZeRO-3 moves it: partitioned into ceil(numel / ranks) elements a rank
  // (partition_parameters.py), so gathers and reduce-scatters carry the padding.
  std::uint64_t padded_bytes(std::size_t tensor) const {
    return flat_padded_elements(stage_.tensors[tensor].elements, static_cast<std::uint64_t>(std::max(1, data_ranks_))) *
           stage_.element_bytes;
  }

  // _post_step: every persistent parameter is all-gathered again after the optimizer
  // updated its partition, one call each, its partition padded to ceil(numel / ranks).
  void after_optimizer(ScheduleWriter& writer, std::size_t optimizer_step) override {
    for (std::size_t tensor = 0; tensor < stage_.tensors.size(); ++tensor) {
      if (!persistent_[tensor]) continue;
      writer.collective(Collective::allgather, GroupRole::data, padded_bytes(tensor),
                        {StepPhase::optimizer, fmt::format("persistent {}", stage_.tensors[tensor].name),
                         stage_.tensors[tensor].layer},
                        {optimizer_step});
    }
  }

 private:
  // The module's containers not yet entered in this pass, then the module, as trace steps.
  void enter(std::size_t module, bool backward, std::vector<std::size_t>& positions, std::set<std::string>& entered) {
    for (const std::string& container : containers_of(module_names_[module]))
      if (entered.insert(container).second) {
        positions.push_back(trace_.size());
        trace_.push_back({container_module(container), backward});
      }
    positions.push_back(trace_.size());
    trace_.push_back({module, backward});
  }

  // A module of no parameters of its own, the same one in forward and backward.
  std::size_t container_module(const std::string& name) {
    const auto found = containers_.find(name);
    if (found != containers_.end()) return found->second;
    modules_.emplace_back();
    module_names_.push_back(name);
    return containers_.emplace(name, modules_.size() - 1).first->second;
  }

  GroupRole gather_group(bool backward) const {
    return backward && config_.zero.zero_hpz_partition_size > 1 ? GroupRole::intra_node : GroupRole::data;
  }

  void gather(ScheduleWriter& writer, const std::vector<std::size_t>& tensors, const LayerPass& pass,
              const std::string& label, int layer) {
    std::uint64_t bytes = 0;
    for (const std::size_t tensor : tensors) bytes += padded_bytes(tensor);
    const std::size_t step =
        writer.collective(Collective::allgather, gather_group(pass.backward), bytes,
                          {pass.backward ? StepPhase::backward : StepPhase::forward, label, layer, pass.micro_batch});
    for (const std::size_t tensor : tensors) {
      available_[tensor] = true;
      gathered_by_[tensor] = step;
      live_elements_ += stage_.tensors[tensor].elements;
      writer.hold_gathered(padded_bytes(tensor));
    }
  }

  // fetch_sub_module: gather what the module needs, take its entries off the parameter
  // queue, then prefetch from the queue.
  void fetch(ScheduleWriter& writer, std::size_t position, const LayerPass& pass) {
    const LeafModule& module = modules_[trace_[position].module];
    std::vector<std::size_t> needed;
    for (const std::size_t tensor : module.tensors)
      if (!persistent_[tensor] && !available_[tensor]) needed.push_back(tensor);
    if (!needed.empty())
      gather(writer, needed, pass, fmt::format("fetch {}", stage_.tensors[needed.front()].name),
             stage_.tensors[needed.front()].layer);

    const auto step = static_cast<long long>(position);
    std::size_t not_yet_taken = 0;
    for (const std::size_t tensor : module.tensors) not_yet_taken += last_use_taken_[tensor] < step ? 1 : 0;
    for (std::size_t taken = 0; taken < not_yet_taken && queue_position_ < queue_.size(); ++taken) {
      const QueuedUse& use = queue_[queue_position_++];
      last_use_taken_[use.tensor] = use.step;
    }

    // Prefetch: take uses off the queue until the parameters not yet gathered among them
    // fill the bucket or the room left under max_live_parameters. A parameter that is
    // gathered already when its later use is taken stays until that use.
    const ZeroSettings& zero = config_.zero;
    if (zero.stage3_prefetch_bucket_size == 0) return;
    const std::uint64_t room =
        zero.stage3_max_live_parameters > live_elements_ ? zero.stage3_max_live_parameters - live_elements_ : 0;
    const std::uint64_t limit = std::min(room, zero.stage3_prefetch_bucket_size);
    std::vector<std::size_t> prefetch;
    std::vector<bool> chosen(stage_.tensors.size(), false);
    std::uint64_t prefetching = 0;
    while (queue_position_ < queue_.size() && prefetching < limit) {
      const QueuedUse& use = queue_[queue_position_++];
      last_use_taken_[use.tensor] = std::max(last_use_taken_[use.tensor], use.step);
      if (persistent_[use.tensor] || available_[use.tensor] || chosen[use.tensor]) continue;
      chosen[use.tensor] = true;
      prefetch.push_back(use.tensor);
      prefetching += stage_.tensors[use.tensor].elements;
    }
    if (!prefetch.empty())
      gather(writer, prefetch, pass, fmt::format("prefetch {}", stage_.tensors[prefetch.front()].name),
             stage_.tensors[prefetch.front()].layer);
  }

  // release_sub_module / __params_to_release, with the step counter already past `position`.
  void release(ScheduleWriter& writer, std::size_t position) {
    const LeafModule& module = modules_[trace_[position].module];
    const auto next_step = static_cast<long long>(position) + 1;
    for (const std::size_t tensor : module.tensors) {
      if (persistent_[tensor] || !available_[tensor]) continue;
      if (last_use_taken_[tensor] > next_step || used_again_soon(tensor, position)) continue;
      available_[tensor] = false;
      live_elements_ -= stage_.tensors[tensor].elements;
      writer.release_gathered(padded_bytes(tensor));
    }
  }

  // Whether the modules after `position`, up to max_reuse_distance elements of them, use `tensor`.
  bool used_again_soon(std::size_t tensor, std::size_t position) const {
    std::uint64_t traversed = 0;
    for (std::size_t next = position + 1; next < trace_.size(); ++next) {
      if (traversed >= config_.zero.stage3_max_reuse_distance) return false;
      const LeafModule& module = modules_[trace_[next].module];
      if (std::find(module.tensors.begin(), module.tensors.end(), tensor) != module.tensors.end()) return true;
      traversed += module.elements;
    }
    return false;
  }

  void reduce(ScheduleWriter& writer, StepPlace place, std::size_t compute_step) {
    place.label = fmt::format("reduce-scatter bucket {}", reductions_.size());
    const std::size_t step =
        writer.collective(Collective::reducescatter, GroupRole::data, bucket_bytes_, place, {compute_step});
    if (!config_.zero.overlaps(3)) writer.block_compute_on(step);
    reductions_.push_back(step);
    bucket_elements_ = 0;
    bucket_bytes_ = 0;
  }

  const PatternConfig& config_;
  const StageModel& stage_;
  int data_ranks_ = 1;
  std::vector<bool> persistent_;
  std::vector<LeafModule> modules_;
  std::vector<std::string> module_names_;  // of each of modules_ (the model's root: unnamed)
  std::map<std::string, std::size_t> containers_;
  std::vector<std::vector<std::size_t>> layer_modules_;
  std::vector<TracePosition> trace_;
  std::vector<std::vector<std::size_t>> forward_positions_;
  std::vector<std::vector<std::size_t>> backward_positions_;
  std::size_t model_forward_position_ = 0;
  std::size_t model_backward_position_ = 0;
  std::vector<QueuedUse> queue_;
  std::size_t queue_position_ = 0;
  // __most_recent_step_id_param_fetched_for: the latest use of each parameter taken off the queue.
  std::vector<long long> last_use_taken_;
  std::vector<bool> available_;
  std::vector<std::size_t> gathered_by_;
  std::uint64_t live_elements_ = 0;
  std::uint64_t bucket_elements_ = 0;
  std::uint64_t bucket_bytes_ = 0;
  std::size_t bucket_ready_ = 0;
  std::vector<std::size_t> reductions_;
};

}  // namespace

std::unique_ptr<DataParallelFlavour> make_zero3_flavour(const PatternConfig& config, const StageModel& stage,
                                                        int world_rank) {
  return std::make_unique<Zero3Flavour>(config, stage, world_rank);
}

}  // namespace commbench
