#include "commbench/pattern/pipeline_order.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>

namespace commbench {

std::vector<PipelineSlot> one_f_one_b_order(int stages, int stage, int micro_batches) {
  const int warmup = std::min(stages - stage - 1, micro_batches);
  const int remaining = micro_batches - warmup;
  std::vector<PipelineSlot> order;
  for (int micro_batch = 0; micro_batch < warmup; ++micro_batch) order.push_back({true, micro_batch, 0});
  for (int step = 0; step < remaining; ++step) {
    order.push_back({true, warmup + step, 0});
    order.push_back({false, step, 0});
  }
  for (int micro_batch = remaining; micro_batch < micro_batches; ++micro_batch)
    order.push_back({false, micro_batch, 0});
  return order;
}

std::vector<PipelineSlot> interleaved_order(int stages, int stage, int micro_batches, int chunks) {
  const int total = micro_batches * chunks;
  const int group = stages * chunks;
  // Megatron's get_model_chunk_id and the micro-batch of the k-th forward/backward.
  const auto slot_of = [&](int k, bool forward) {
    const int in_group = k % group;
    int chunk = in_group / stages;
    if (!forward) chunk = chunks - 1 - chunk;
    return PipelineSlot{forward, (k / group) * stages + in_group % stages, chunk};
  };
  const int warmup = std::min((stages - stage - 1) * 2 + (chunks - 1) * stages, total);
  const int remaining = total - warmup;
  std::vector<PipelineSlot> order;
  for (int k = 0; k < warmup; ++k) order.push_back(slot_of(k, true));
  for (int k = 0; k < remaining; ++k) {
    order.push_back(slot_of(warmup + k, true));
    order.push_back(slot_of(k, false));
  }
  for (int k = remaining; k < total; ++k) order.push_back(slot_of(k, false));
  return order;
}

namespace {

// (forward?, virtual stage, micro-batch): a slot's identity across stages.
using SlotKey = std::tuple<bool, int, int>;

}  // namespace

PipelinePlan plan_pipeline(int stages, int micro_batches, int chunks) {
  const int virtual_stages = stages * chunks;
  std::vector<std::vector<PipelineSlot>> orders;
  for (int stage = 0; stage < stages; ++stage)
    orders.push_back(chunks > 1 ? interleaved_order(stages, stage, micro_batches, chunks)
                                : one_f_one_b_order(stages, stage, micro_batches));

  PipelinePlan plan;
  plan.stages.resize(static_cast<std::size_t>(stages));
  std::map<SlotKey, int> finished_at;  // tick each slot ran in
  std::vector<std::size_t> next(static_cast<std::size_t>(stages), 0);
  std::size_t left = 0;
  for (const auto& order : orders) left += order.size();

  for (int tick = 0; left > 0; ++tick) {
    std::vector<PipelineTransfer> produced;
    bool progressed = false;
    for (int stage = 0; stage < stages; ++stage) {
      auto& position = next[static_cast<std::size_t>(stage)];
      const auto& order = orders[static_cast<std::size_t>(stage)];
      if (position == order.size()) continue;
      const PipelineSlot slot = order[position];
      const int virtual_stage = slot.chunk * stages + stage;
      // What the slot needs: the previous virtual stage's activation, the next one's
      // gradient (the last virtual stage starts backward from its own forward).
      SlotKey needed;
      if (slot.forward)
        needed = {true, virtual_stage - 1, slot.micro_batch};
      else if (virtual_stage == virtual_stages - 1)
        needed = {true, virtual_stage, slot.micro_batch};
      else
        needed = {false, virtual_stage + 1, slot.micro_batch};
      const bool has_input = slot.forward && virtual_stage == 0;
      const auto found = finished_at.find(needed);
      if (!has_input && (found == finished_at.end() || found->second >= tick)) continue;
      ++position;
      --left;
      progressed = true;
      finished_at[{slot.forward, virtual_stage, slot.micro_batch}] = tick;
      plan.stages[static_cast<std::size_t>(stage)].push_back({false, slot, 0});
      const int consumer = slot.forward ? virtual_stage + 1 : virtual_stage - 1;
      if (consumer < 0 || consumer >= virtual_stages) continue;
      const int consumer_stage = consumer % stages;
      if (consumer_stage != stage) produced.push_back({stage, consumer_stage, !slot.forward, slot.micro_batch});
    }
    if (!progressed) throw std::logic_error("plan_pipeline: no stage can run (an order that cannot complete)");
    plan.ticks = tick + 1;
    if (produced.empty()) continue;
    const std::size_t round = plan.rounds.size();
    plan.rounds.push_back(produced);
    for (int stage = 0; stage < stages; ++stage) {
      const bool involved = std::any_of(produced.begin(), produced.end(), [stage](const PipelineTransfer& transfer) {
        return transfer.source == stage || transfer.destination == stage;
      });
      if (involved) plan.stages[static_cast<std::size_t>(stage)].push_back({true, {}, round});
    }
  }
  return plan;
}

double ideal_pipeline_bubble(int stages, int micro_batches, int chunks) {
  return static_cast<double>(stages - 1) / (static_cast<double>(chunks) * micro_batches + stages - 1);
}

}  // namespace commbench
