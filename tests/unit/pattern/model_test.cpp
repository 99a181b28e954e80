// Presets against the published sizes of their models, and the compute stand-in's times.
#include <gtest/gtest.h>

#include "commbench/pattern/model_presets.hpp"
#include "commbench/pattern/model_tensors.hpp"
#include "schedule_test_support.hpp"
#include "usage_error.hpp"

namespace commbench {
namespace {

TEST(PatternModel, NamesOfPatternsPhasesAndFsdpSettings) {
  EXPECT_EQ(parse_pattern_kind("ZeRO3", "--pattern"), PatternKind::zero3);
  EXPECT_EQ(name_of(PatternKind::pipeline), "pipeline");
  EXPECT_EQ(testing::usage_error_of([] { parse_pattern_kind("zero4", "--pattern"); }),
            "--pattern: unknown value 'zero4' (did you mean zero1?); expected one of: ddp, fsdp, zero1, zero2, zero3, "
            "pipeline, tp, ep");
  EXPECT_EQ(name_of(StepPhase::optimizer), "optimizer");
  EXPECT_EQ(parse_fsdp_sharding("HYBRID_SHARD", "--fsdp-sharding"), FsdpSharding::hybrid_shard);
  EXPECT_EQ(name_of(FsdpSharding::shard_grad_op), "SHARD_GRAD_OP");
  EXPECT_EQ(parse_fsdp_backward_prefetch("backward_post", "--backward-prefetch"), FsdpBackwardPrefetch::backward_post);
}

TEST(PatternModel, PresetsAddUpToThePublishedSizes) {
  EXPECT_NEAR(model_preset("llama-3-8b", "--preset").parameters, 8.03e9, 0.005e9);
  EXPECT_NEAR(model_preset("mistral-7b", "--preset").parameters, 7.24e9, 0.005e9);
  EXPECT_NEAR(model_preset("llama-3-70b", "--preset").parameters, 70.55e9, 0.01e9);
  // Llama 4 Scout's text model: 16 routed experts and one shared expert per layer.
  const ModelShape scout = model_preset("Llama-4-Scout", "--preset");
  EXPECT_NEAR(scout.parameters, 107.8e9, 0.1e9);
  EXPECT_NEAR(active_parameters(scout), 17.2e9, 0.1e9);
  EXPECT_EQ(scout.experts, 16);
}

TEST(PatternModel, RankTensorsShardOverTensorPipelineAndExperts) {
  ModelShape model = testing::small_llama(4);
  model.experts = 4;
  model.ffn = 1024;
  ParallelLayout layout;
  layout.tensor = 2;
  layout.pipeline = 2;
  layout.data = 2;
  layout.expert = 2;
  layout.ranks_per_node = 8;
  // Rank 5: tp rank 1, dp rank 0, stage 1 (layers 2, 3 and the head); experts 0 and 1.
  const std::vector<ParameterTensor> held = rank_tensors(model, layout, 5);
  for (const ParameterTensor& tensor : held) {
    EXPECT_GE(tensor.layer, 2) << tensor.name;
    EXPECT_LE(tensor.expert, 1) << tensor.name;
    if (tensor.name == "layers.2.self_attn.q_proj") EXPECT_EQ(tensor.elements, 1024u * 1024u / 2u);
    if (tensor.name == "layers.2.input_layernorm") EXPECT_EQ(tensor.elements, 1024u);
  }
  EXPECT_EQ(held.back().name, "lm_head");
}

TEST(PatternModel, ComputeFollowsSixNTokens) {
  PatternConfig config = testing::config_of(PatternKind::ddp, model_preset("llama-3-8b", "--preset"), 2);
  config.model.sequence = 8192;
  const RankSchedule schedule = build_schedule(config, 0);
  // One block: 2 x 4096^2 (q, o) + 2 x 4096 x 1024 (k, v) + 3 x 4096 x 14336 + 2 x 4096.
  const double block = 218'112'000;
  const double forward = 2 * block * 8192 / 400e12;
  double total = 0;
  for (const ScheduleStep& step : schedule.steps) {
    if (step.kind != StepKind::compute) continue;
    total += step.compute_seconds;
    if (step.label == "layer 0 forward") EXPECT_DOUBLE_EQ(step.compute_seconds, forward);
    if (step.label == "layer 0 backward") EXPECT_DOUBLE_EQ(step.compute_seconds, 2 * forward);
    if (step.label == "embedding forward") EXPECT_EQ(step.compute_seconds, 0);  // a lookup
  }
  // 6 x (parameters but the embedding) x tokens.
  const double counted = config.model.parameters - 128256.0 * 4096;
  EXPECT_NEAR(total, 6 * counted * 8192 / 400e12, 1e-9);
}

TEST(PatternModel, ComputeMillisecondsAndScale) {
  PatternConfig config = testing::config_of(PatternKind::ddp, testing::small_llama(2), 2);
  config.compute.layer_milliseconds = 30;
  config.compute.scale = 0.5;
  const RankSchedule schedule = build_schedule(config, 0);
  for (const ScheduleStep& step : schedule.steps) {
    if (step.label == "layer 1 forward") EXPECT_DOUBLE_EQ(step.compute_seconds, 0.005);
    if (step.label == "layer 1 backward") EXPECT_DOUBLE_EQ(step.compute_seconds, 0.010);
    if (step.label == "head forward") EXPECT_EQ(step.compute_seconds, 0);
  }
}

// Every preset under every pattern on 16 ranks, 8 per node, as a user would run them:
// the schedule builds, ends with the optimizer, and reduces every gradient it holds.
TEST(PatternModel, EveryPresetBuildsUnderEveryPattern) {
  for (const std::string_view preset : model_preset_names()) {
    for (const PatternKind kind : {PatternKind::ddp, PatternKind::fsdp, PatternKind::zero1, PatternKind::zero2,
                                   PatternKind::zero3, PatternKind::pipeline, PatternKind::tp, PatternKind::ep}) {
      PatternConfig config = testing::config_of(kind, model_preset(preset, "--preset"), 16);
      config.layout.ranks_per_node = 8;
      if (kind == PatternKind::pipeline) config.layout = {1, 4, 4, 1, 8};
      if (kind == PatternKind::tp) config.layout = {8, 1, 2, 1, 8};
      if (kind == PatternKind::ep) {
        if (config.model.experts <= 1) continue;
        config.layout.expert = 8;
      }
      const RankSchedule schedule = build_schedule(config, 9);
      ASSERT_FALSE(schedule.steps.empty());
      EXPECT_EQ(schedule.steps.back().phase, StepPhase::optimizer) << preset << " " << name_of(kind);
      if (kind == PatternKind::zero3 || kind == PatternKind::fsdp) {
        double held = 0;
        for (const ParameterTensor& tensor : rank_tensors(config.model, config.layout, 9))
          held += static_cast<double>(tensor.elements) * 2;
        EXPECT_EQ(
            static_cast<double>(testing::total_bytes(
                schedule, [](const ScheduleStep& step) { return testing::is_op(step, Collective::reducescatter); })),
            held)
            << preset << " " << name_of(kind);
      }
    }
  }
}

}  // namespace
}  // namespace commbench
