#include "commbench/pattern/deepspeed_config.hpp"

#include <gtest/gtest.h>

#include "usage_error.hpp"

namespace commbench {
namespace {

using testing::usage_error_of;

constexpr const char* kLabel = "ds.json";

DeepSpeedConfig parsed(const std::string& text, std::vector<std::string>& warnings, int hidden = 4096) {
  return parse_deepspeed_config(text, kLabel, hidden, warnings);
}

std::string error_of(const std::string& text, int hidden = 4096) {
  std::vector<std::string> warnings;
  return usage_error_of([&] { parsed(text, warnings, hidden); });
}

TEST(PatternDeepSpeedConfig, ReadsTheZeroBlock) {
  std::vector<std::string> warnings;
  const DeepSpeedConfig config = parsed(R"({"zero_optimization": {
      "stage": 3, "overlap_comm": false, "contiguous_gradients": true, "sub_group_size": 1e9,
      "reduce_bucket_size": 5e8, "allgather_bucket_size": 2e8,
      "stage3_prefetch_bucket_size": 5e7, "stage3_param_persistence_threshold": 1e5,
      "stage3_max_live_parameters": 1e9, "stage3_max_reuse_distance": 0,
      "zero_hpz_partition_size": 8, "stage3_gather_16bit_weights_on_model_save": true,
      "use_multi_rank_bucket_allreduce": false},
      "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 4, "bf16": {"enabled": true}})",
                                        warnings);
  EXPECT_EQ(config.stage, 3);
  EXPECT_FALSE(config.zero.overlaps(3));
  EXPECT_EQ(config.zero.reduce_bucket_size, 500'000'000u);
  EXPECT_EQ(config.zero.allgather_bucket_size, 200'000'000u);
  EXPECT_EQ(config.zero.stage3_prefetch_bucket_size, 50'000'000u);
  EXPECT_EQ(config.zero.stage3_param_persistence_threshold, 100'000u);
  EXPECT_EQ(config.zero.stage3_max_live_parameters, 1'000'000'000u);
  EXPECT_EQ(config.zero.stage3_max_reuse_distance, 0u);
  EXPECT_EQ(config.zero.zero_hpz_partition_size, 8);
  EXPECT_FALSE(config.zero.use_multi_rank_bucket_allreduce);
  EXPECT_EQ(config.micro_batch, 2);
  EXPECT_EQ(config.gradient_accumulation, 4);
  EXPECT_EQ(config.dtype, DataType::bfloat16);
  EXPECT_TRUE(warnings.empty());
}

TEST(PatternDeepSpeedConfig, AutoResolvesAsTheHuggingFaceTrainerDoes) {
  std::vector<std::string> warnings;
  const DeepSpeedConfig config = parsed(R"({"zero_optimization": {"stage": 3, "reduce_bucket_size": "auto",
      "stage3_prefetch_bucket_size": "auto", "stage3_param_persistence_threshold": "auto"},
      "train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto"})",
                                        warnings, 4096);
  EXPECT_EQ(config.zero.reduce_bucket_size, 4096u * 4096u);
  EXPECT_EQ(config.zero.stage3_prefetch_bucket_size, 15'099'494u);  // int(0.9 x 4096^2)
  EXPECT_EQ(config.zero.stage3_param_persistence_threshold, 40'960u);
  EXPECT_FALSE(config.micro_batch.has_value());
  EXPECT_FALSE(config.gradient_accumulation.has_value());
  EXPECT_EQ(error_of(R"({"zero_optimization": {"stage": 3, "reduce_bucket_size": "auto"}})", 0),
            "ds.json: zero_optimization.reduce_bucket_size: \"auto\" needs the model's hidden size (--hidden or "
            "--preset)");
  EXPECT_EQ(error_of(R"({"zero_optimization": {"stage": 3, "stage3_max_live_parameters": "auto"}})"),
            "ds.json: zero_optimization.stage3_max_live_parameters: \"auto\" is not filled in by the Hugging Face "
            "integration for this key");
}

TEST(PatternDeepSpeedConfig, DefaultsAreDeepSpeeds) {
  std::vector<std::string> warnings;
  const DeepSpeedConfig config = parsed(R"({"zero_optimization": {"stage": 2}})", warnings);
  EXPECT_EQ(config.zero.reduce_bucket_size, 500'000'000u);
  EXPECT_EQ(config.zero.stage3_prefetch_bucket_size, 50'000'000u);
  EXPECT_FALSE(config.zero.overlaps(2));
  EXPECT_TRUE(config.zero.overlaps(3));  // DeepSpeed turns overlap_comm on for stage 3
  EXPECT_TRUE(config.zero.use_multi_rank_bucket_allreduce);
}

TEST(PatternDeepSpeedConfig, UnknownAndUnmodelledKeysAreListed) {
  std::vector<std::string> warnings;
  parsed(R"({"zero_optimization": {"stage": 2, "reduce_bucket_sise": 5e8,
      "offload_optimizer": {"device": "cpu"}, "offload_param": {"device": "none"},
      "stage3_max_live_parameters": 1e9}, "optimizer": {"type": "AdamW"}, "steps_per_print": 10})",
         warnings);
  ASSERT_EQ(warnings.size(), 4u);
  EXPECT_EQ(warnings[0], "ds.json: zero_optimization.reduce_bucket_sise: unknown key, not read");
  EXPECT_EQ(warnings[1], "ds.json: zero_optimization.offload_optimizer: not modelled (the schedule assumes it is off)");
  EXPECT_EQ(warnings[2],
            "ds.json: zero_optimization.stage3_max_live_parameters: read by ZeRO stage 3 only, not stage 2");
  EXPECT_EQ(warnings[3], "ds.json: not read (no effect on the step's communication): optimizer, steps_per_print");
}

TEST(PatternDeepSpeedConfig, BadInputNamesTheKey) {
  EXPECT_EQ(error_of("{\"zero_optimization\": {\"stage\": 3,"), "ds.json: not JSON (byte 35)");
  EXPECT_EQ(error_of("[1, 2]"), "ds.json: expected a JSON object");
  EXPECT_EQ(error_of(R"({"zero_optimization": {"reduce_bucket_size": 2e816}})"),
            "ds.json: not JSON (a number out of range)");
  EXPECT_EQ(error_of(R"({"zero_optimization": {"reduce_bucket_size": -1}})"),
            "ds.json: zero_optimization.reduce_bucket_size: -1 is negative");
  EXPECT_EQ(error_of(R"({"zero_optimization": {"allgather_bucket_size": 2.5}})"),
            "ds.json: zero_optimization.allgather_bucket_size: 2.5 is not a whole number");
  EXPECT_EQ(error_of(R"({"zero_optimization": {"stage": 4}})"),
            "ds.json: zero_optimization.stage: 4 is not a ZeRO stage (0..3)");
  EXPECT_EQ(error_of(R"({"zero_optimization": {"stage": 0}})"),
            "ds.json: zero_optimization.stage: 0 disables ZeRO (use --pattern ddp for plain data parallelism)");
  EXPECT_EQ(error_of(R"({"zero_optimization": {"overlap_comm": "yes"}})"),
            "ds.json: zero_optimization.overlap_comm: expected true or false, got \"yes\"");
  EXPECT_EQ(error_of(R"({"train_micro_batch_size_per_gpu": 0})"),
            "ds.json: train_micro_batch_size_per_gpu: 0 is not a positive whole number");
}

TEST(PatternDeepSpeedConfig, WarningsStayOneLine) {
  std::vector<std::string> warnings;
  parsed("{\"zero_optimization\": {\"a\\nb\": 1}, \"c\\nd\": 2}", warnings);
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_EQ(warnings[0], "ds.json: zero_optimization.a\\nb: unknown key, not read");
  EXPECT_EQ(warnings[1], "ds.json: not read (no effect on the step's communication): c\\nd");
}

TEST(PatternDeepSpeedConfig, ContradictionsNameTheKey) {
  EXPECT_EQ(error_of(R"({"zero_optimization": {"stage": 3, "stage3_prefetch_bucket_size": 5e7,
      "prefetch_bucket_size": 1e6}})"),
            "ds.json: zero_optimization.stage3_prefetch_bucket_size: contradicts "
            "zero_optimization.prefetch_bucket_size (50000000.0 vs 1000000.0)");
  EXPECT_EQ(error_of(R"({"bf16": {"enabled": true}, "fp16": {"enabled": true}})"),
            "ds.json: bf16.enabled: contradicts fp16.enabled (both true)");
}

}  // namespace
}  // namespace commbench
