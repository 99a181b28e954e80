#include "step_composer.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "commbench/pattern/pipeline_order.hpp"
#include "data_parallel_flavour.hpp"
#include "schedule_writer.hpp"
#include "stage_model.hpp"

namespace commbench {
namespace {

std::string layer_name(const StageModel& stage, const LocalLayer& layer) {
  if (layer.layer < 0) return "embedding";
  if (!layer.transformer) return "head";
  (void)stage;
  return fmt::format("layer {}", layer.layer);
}

class StepComposer {
 public:
  StepComposer(const PatternConfig& config, int world_rank)
      : config_(config),
        stage_(stage_model(config, world_rank)),
        writer_(world_rank, config.model.dtype),
        flavour_(make_data_parallel_flavour(config, stage_, world_rank)),
        stage_index_(config.layout.pipeline_rank(world_rank)) {}

  RankSchedule compose() {
    const int micro_batches = config_.micro_batches();
    if (config_.layout.pipeline == 1) {
      for (int micro_batch = 0; micro_batch < micro_batches; ++micro_batch) {
        run_pass({true, micro_batch, 0}, micro_batches);
        run_pass({false, micro_batch, 0}, micro_batches);
      }
    } else {
      run_pipeline(micro_batches);
    }
    const std::vector<std::size_t> reductions = flavour_->finish_backward(writer_);
    const std::size_t optimizer = writer_.compute({StepPhase::optimizer, "optimizer step"}, 0.0, reductions);
    flavour_->after_optimizer(writer_, optimizer);
    return writer_.take();
  }

 private:
  std::uint64_t activation_message_bytes() const {
    // With sequence parallelism each tensor-parallel rank holds 1/tp of the sequence.
    const std::uint64_t divisor = config_.tensor_parallel.sequence_parallel ? config_.layout.tensor : 1;
    return stage_.activation_bytes / divisor;
  }

  void run_pipeline(int micro_batches) {
    const PipelinePlan plan = plan_pipeline(config_.layout.pipeline, micro_batches, config_.pipeline.virtual_stages);
    const std::uint64_t message = activation_message_bytes();
    for (const auto& transfers : plan.rounds) {
      PlannedPeerRound round;
      round.group = GroupRole::pipeline;
      round.message_bytes = message;
      for (const PipelineTransfer& transfer : transfers)
        round.transfers.emplace_back(transfer.source, transfer.destination);
      writer_.add_round(std::move(round));
    }
    for (const PipelineEvent& event : plan.stages[static_cast<std::size_t>(stage_index_)]) {
      if (!event.is_round) {
        run_pass(event.slot, micro_batches);
        continue;
      }
      // Megatron waits for its batched isend/irecv before the next compute; what this
      // stage sends was produced by its last compute.
      std::string label;
      bool any_activation = false;
      for (const PipelineTransfer& transfer : plan.rounds[event.round]) {
        if (transfer.source != stage_index_ && transfer.destination != stage_index_) continue;
        any_activation = any_activation || !transfer.gradient;
        label += fmt::format("{}mb {} {} {} stage {}", label.empty() ? "" : ", ", transfer.micro_batch,
                             transfer.gradient ? "gradients" : "activations",
                             transfer.source == stage_index_ ? "to" : "from",
                             transfer.source == stage_index_ ? transfer.destination : transfer.source);
      }
      std::vector<std::size_t> waits;
      if (writer_.has_compute()) waits.push_back(writer_.last_compute());
      const std::size_t step =
          writer_.peer(event.round, message, {any_activation ? StepPhase::forward : StepPhase::backward, label}, waits);
      writer_.block_compute_on(step);
    }
  }

  void run_pass(const PipelineSlot& slot, int micro_batches) {
    const bool backward = !slot.forward;
    const PassBounds bounds{slot.micro_batch, slot.chunk, backward, slot.micro_batch == 0,
                            slot.micro_batch == micro_batches - 1};
    flavour_->begin_pass(writer_, bounds);
    std::vector<std::size_t> order;
    for (std::size_t index = 0; index < stage_.layers.size(); ++index)
      if (stage_.layers[index].chunk == slot.chunk) order.push_back(index);
    if (backward) std::reverse(order.begin(), order.end());
    for (const std::size_t index : order) {
      const LayerPass pass{index, slot.micro_batch, backward, bounds.first_micro_batch, bounds.last_micro_batch};
      const std::vector<std::size_t> waits = flavour_->before_layer(writer_, pass);
      const std::size_t last = run_layer(stage_.layers[index], pass, waits);
      flavour_->after_layer(writer_, pass, last);
    }
    flavour_->end_pass(writer_, bounds);
  }

  // A blocking collective inside a layer: it waits for the compute before it, the compute
  // after it waits for it (Megatron's tensor-parallel and MoE collectives are synchronous).
  void blocking(Collective op, GroupRole group, std::uint64_t bytes, const StepPlace& place) {
    std::vector<std::size_t> waits;
    if (writer_.has_compute()) waits.push_back(writer_.last_compute());
    const std::size_t step = op == Collective::alltoallv
                                 ? writer_.alltoallv(group, bytes, config_.routing, place, waits)
                                 : writer_.collective(op, group, bytes, place, waits);
    writer_.block_compute_on(step);
  }

  std::size_t run_layer(const LocalLayer& layer, const LayerPass& pass, const std::vector<std::size_t>& waits) {
    const StepPhase phase = pass.backward ? StepPhase::backward : StepPhase::forward;
    const std::string name = layer_name(stage_, layer);
    const auto place = [&](std::string_view what) {
      return StepPlace{phase, fmt::format("{} {}", name, what), layer.layer, pass.micro_batch};
    };
    const double seconds = layer.forward_seconds * (pass.backward ? 2.0 : 1.0);
    const bool tensor_parallel = config_.layout.tensor > 1 && layer.transformer;
    const bool expert_parallel = layer.moe && config_.layout.expert > 1;
    if (!tensor_parallel && !expert_parallel)
      return writer_.compute(place(pass.backward ? "backward" : "forward"), seconds, waits);

    const bool sequence_parallel = tensor_parallel && config_.tensor_parallel.sequence_parallel;
    const std::uint64_t activations = stage_.activation_bytes;
    // Tokens this rank routes: each is sent to top_k experts.
    const std::uint64_t routed = activation_message_bytes() * static_cast<std::uint64_t>(config_.model.top_k);
    const double attention = seconds * layer.attention_share;
    const double mlp = seconds - attention;
    // Megatron's f/g operators: allreduce after the row-parallel output (forward) and
    // of the column-parallel input gradient (backward); with sequence parallelism a
    // reduce-scatter and an all-gather of the full activations instead.
    const auto tensor_exit = [&](std::string_view what) {
      if (!tensor_parallel) return;
      blocking(sequence_parallel ? Collective::reducescatter : Collective::allreduce, GroupRole::tensor, activations,
               place(what));
    };
    const auto tensor_entry = [&](std::string_view what) {
      if (!sequence_parallel) return;
      blocking(Collective::allgather, GroupRole::tensor, activations, place(what));
      // Backward gathers the input again for the weight gradient (Megatron does not keep it).
      if (pass.backward) blocking(Collective::allgather, GroupRole::tensor, activations, place("input regather"));
    };
    const auto expert_exchange = [&](std::string_view what) {
      if (expert_parallel) blocking(Collective::alltoallv, GroupRole::expert, routed, place(what));
    };
    std::size_t last = 0;
    if (!pass.backward) {
      tensor_entry("attention all-gather");
      writer_.compute(place("attention forward"), attention, waits);
      tensor_exit(sequence_parallel ? "attention reduce-scatter" : "attention allreduce");
      tensor_entry("mlp all-gather");
      expert_exchange("token dispatch");
      last = writer_.compute(place("mlp forward"), mlp);
      expert_exchange("token combine");
      tensor_exit(sequence_parallel ? "mlp reduce-scatter" : "mlp allreduce");
    } else {
      tensor_entry("mlp all-gather");
      expert_exchange("combine backward");
      writer_.compute(place("mlp backward"), mlp, waits);
      expert_exchange("dispatch backward");
      tensor_exit(sequence_parallel ? "mlp reduce-scatter" : "mlp allreduce");
      tensor_entry("attention all-gather");
      last = writer_.compute(place("attention backward"), attention);
      tensor_exit(sequence_parallel ? "attention reduce-scatter" : "attention allreduce");
    }
    return last;
  }

  const PatternConfig& config_;
  StageModel stage_;
  ScheduleWriter writer_;
  std::unique_ptr<DataParallelFlavour> flavour_;
  int stage_index_;
};

}  // namespace

RankSchedule compose_step(const PatternConfig& config, int world_rank) {
  return StepComposer(config, world_rank).compose();
}

}  // namespace commbench
