#include "pattern_flags.hpp"

#include <algorithm>

#include <gtest/gtest.h>

#include "temp_dir.hpp"
#include "usage_error.hpp"

namespace commbench {
namespace {

using testing::usage_error_of;

PatternRequest parsed_flags(std::vector<std::string> arguments) {
  CLI::App app{"test"};
  PatternRequest flags;
  add_pattern_flags(app, flags);
  std::reverse(arguments.begin(), arguments.end());  // CLI11 takes them last first
  app.parse(arguments);
  return flags;
}

PatternConfig resolved(const std::vector<std::string>& arguments, int ranks = 8, int ranks_per_node = 8) {
  std::vector<std::string> warnings;
  return resolve_pattern_config(parsed_flags(arguments), ranks, ranks_per_node, warnings);
}

std::string error_of(const std::vector<std::string>& arguments, int ranks = 8) {
  return usage_error_of([&] { resolved(arguments, ranks); });
}

TEST(PatternRequest, HelpListsTheFlagsByGroup) {
  CLI::App app{"test"};
  PatternRequest flags;
  add_pattern_flags(app, flags);
  const std::string help = app.help();
  for (const char* expected : {"Model:", "Parallel layout:", "Framework settings:", "Compute stand-in:", "--preset",
                               "llama-4-scout", "--micro-batches", "-M", "--deepspeed-config", "--limit-all-gathers"})
    EXPECT_NE(help.find(expected), std::string::npos) << expected;
  EXPECT_EQ(*parsed_flags({"-M", "16"}).micro_batches, 16);
}

TEST(PatternRequest, CountsTakeExponentsAndSuffixes) {
  EXPECT_EQ(*parsed_flags({"--params", "8e9"}).parameters, 8e9);
  EXPECT_EQ(*parsed_flags({"--params", "8B"}).parameters, 8e9);
  EXPECT_EQ(*parsed_flags({"--params", "1.5T"}).parameters, 1.5e12);
  EXPECT_EQ(*parsed_flags({"--params", "500m"}).parameters, 5e8);
  EXPECT_EQ(usage_error_of([] { parsed_flags({"--params", "8X"}); }), "--params: '8X' is not a count (like 8e9 or 8B)");
  EXPECT_EQ(usage_error_of([] { parsed_flags({"--params", "-1B"}); }), "--params: must be positive (got -1B)");
  EXPECT_EQ(usage_error_of([] { parsed_flags({"--params", "1e30"}); }),
            "--params: '1e30' is more than 1e15 parameters (byte counts would overflow)");
  EXPECT_EQ(*parsed_flags({"--params", "1000T"}).parameters, 1e15);
}

TEST(PatternRequest, PresetGivesThePublishedShape) {
  const PatternConfig config = resolved({"--preset", "llama-3-8b"});
  EXPECT_EQ(config.model.layers, 32);
  EXPECT_EQ(config.model.hidden, 4096);
  EXPECT_NEAR(config.model.parameters, 8.03e9, 0.01e9);
  EXPECT_EQ(config.kind, PatternKind::ddp);
  EXPECT_EQ(config.layout.data, 8);
  EXPECT_EQ(resolved({"--preset", "llama-3-8b", "--seq", "2048"}).model.sequence, 2048);
  EXPECT_EQ(usage_error_of([] {
              parsed_flags({"--preset", "gpt-5"});
            }),
            "--preset: unknown preset 'gpt-5'; expected one of: llama-3-8b, mistral-7b, llama-3-70b, llama-4-scout");
}

TEST(PatternRequest, CustomModelNeedsItsSize) {
  EXPECT_EQ(error_of({"--params", "8B"}), "--layers: needed without --preset (with --params, or --hidden and --ffn)");
  EXPECT_EQ(error_of({"--layers", "32"}),
            "--params: needed without --preset and --hidden (e.g. --params 8B --layers 32)");
  const PatternConfig config = resolved({"--params", "8B", "--layers", "32", "--hidden", "4096", "--ffn", "14336"});
  EXPECT_DOUBLE_EQ(config.model.parameters, 8e9);
  EXPECT_EQ(error_of({"--params", "1B", "--layers", "32", "--hidden", "4096"}),
            "--params 1000000000: cannot hold 32 layers of 268443648 parameters (--hidden 4096, --ffn 16384)");
}

TEST(PatternRequest, VocabularyHeadsAndTiedEmbeddingsShapeTheTensors) {
  const std::vector<std::string> shape{"--layers", "2", "--hidden", "256", "--ffn", "512", "--vocab", "1000"};
  const ModelShape plain = resolved(shape).model;
  EXPECT_EQ(plain.vocabulary, 1000);
  // Per layer: two norms, q/k/v/o of 256^2, gate/up/down of 256 x 512; the embedding,
  // the final norm and the head.
  const double layer = 2 * 256 + 4 * 65536 + 3 * 256 * 512;
  EXPECT_EQ(plain.parameters, 2 * layer + 2 * 1000 * 256 + 256);
  std::vector<std::string> tied = shape;
  tied.push_back("--tie-embeddings");
  EXPECT_EQ(resolved(tied).model.parameters, plain.parameters - 1000 * 256);
  std::vector<std::string> grouped = shape;
  grouped.insert(grouped.end(), {"--heads", "4", "--kv-heads", "2"});
  const ModelShape gqa = resolved(grouped).model;
  EXPECT_EQ(gqa.attention_heads, 4);
  EXPECT_EQ(gqa.kv_heads, 2);
  EXPECT_EQ(gqa.parameters, plain.parameters - 2 * 2 * 256 * 128);  // k and v at half width, 2 layers
  std::vector<std::string> bad = shape;
  bad.insert(bad.end(), {"--heads", "3"});
  EXPECT_EQ(error_of(bad), "--heads 3: does not divide --hidden 256");
  bad = shape;
  bad.insert(bad.end(), {"--heads", "4", "--kv-heads", "3"});
  EXPECT_EQ(error_of(bad), "--kv-heads 3: does not divide --heads 4");
  EXPECT_EQ(error_of({"--layers", "2", "--hidden", "256", "--kv-heads", "2"}), "--kv-heads: needs --heads");
  EXPECT_EQ(error_of({"--layers", "2", "--hidden", "256", "--tie-embeddings"}),
            "--tie-embeddings: needs --vocab (or a preset's vocabulary)");
  EXPECT_EQ(error_of({"--layers", "2", "--params", "1M", "--vocab", "100"}),
            "--vocab: with --params the embedding and head are what the layers leave; give one of them");
}

TEST(PatternRequest, LayoutDefaultsAndLimits) {
  const PatternConfig config = resolved({"--preset", "llama-3-8b", "--tp", "2", "--pp", "2"});
  EXPECT_EQ(config.layout.data, 2);
  EXPECT_EQ(config.micro_batches(), 4);  // 2 x stages without --grad-accum
  EXPECT_EQ(resolved({"--preset", "llama-3-8b", "--pattern", "tp"}).layout.tensor, 8);
  EXPECT_EQ(error_of({"--preset", "llama-3-8b", "--pp", "16"}), "--pp 16: more than the job's 8 ranks");
  EXPECT_EQ(error_of({"--preset", "llama-3-8b", "--tp", "3"}), "--tp 3 x --pp 1: does not divide the job's 8 ranks");
  EXPECT_EQ(error_of({"--preset", "llama-3-8b", "--pattern", "ep"}),
            "--pattern ep: the model has no experts (--experts, or --preset llama-4-scout)");
  const PatternConfig moe = resolved({"--preset", "llama-4-scout", "--pattern", "ep", "--routing", "zipf:1.1"});
  EXPECT_EQ(moe.layout.expert, 8);
  EXPECT_EQ(moe.routing.kind, PeerDistribution::Kind::zipf);
}

TEST(PatternRequest, FrameworkFlagsApplyToTheirFramework) {
  const PatternConfig ddp = resolved({"--preset", "mistral-7b", "--bucket-cap-mb", "50", "--broadcast-buffers", "0"});
  EXPECT_EQ(ddp.ddp.bucket_cap_mb, 50);
  EXPECT_DOUBLE_EQ(first_bucket_cap_mb(ddp.ddp), 50);  // given, it caps DDP's first bucket too
  EXPECT_DOUBLE_EQ(first_bucket_cap_mb(resolved({"--preset", "mistral-7b", "--bucket-cap-mb", "50",
                                                 "--first-bucket-mb", "2"}).ddp),
                   2);
  EXPECT_FALSE(ddp.ddp.broadcast_buffers);
  const PatternConfig fsdp =
      resolved({"--preset", "mistral-7b", "--pattern", "fsdp", "--fsdp-sharding", "hybrid_shard", "--fsdp-unit", "2",
                "--backward-prefetch", "none", "--limit-all-gathers", "0", "--forward-prefetch", "1"});
  EXPECT_EQ(fsdp.fsdp.sharding, FsdpSharding::hybrid_shard);
  EXPECT_EQ(fsdp.fsdp.layers_per_unit, 2);
  EXPECT_EQ(fsdp.fsdp.backward_prefetch, FsdpBackwardPrefetch::none);
  EXPECT_FALSE(fsdp.fsdp.limit_all_gathers);
  EXPECT_TRUE(fsdp.fsdp.forward_prefetch);
  EXPECT_EQ(fsdp.fsdp.version, 2);  // fully_shard unless told otherwise
  EXPECT_EQ(resolved({"--preset", "mistral-7b", "--pattern", "fsdp", "--fsdp-version", "1"}).fsdp.version, 1);
  EXPECT_EQ(usage_error_of([] { parsed_flags({"--fsdp-version", "3"}); }), "--fsdp-version: expected 1 or 2 (got 3)");
  EXPECT_EQ(error_of({"--preset", "mistral-7b", "--fsdp-version", "1"}),
            "--fsdp-version: applies to FSDP, not --pattern ddp");
  EXPECT_EQ(error_of({"--preset", "mistral-7b", "--pattern", "zero3", "--bucket-cap-mb", "50"}),
            "--bucket-cap-mb: applies to DDP, not --pattern zero3");
  EXPECT_EQ(error_of({"--preset", "mistral-7b", "--fsdp-unit", "model"}),
            "--fsdp-unit: applies to FSDP, not --pattern ddp");
  EXPECT_EQ(usage_error_of([] {
              parsed_flags({"--bucket-cap-mb", "-1"});
            }),
            "--bucket-cap-mb: must be positive (got -1)");
  EXPECT_EQ(error_of({"--preset", "mistral-7b", "--sequence-parallel"}),
            "--sequence-parallel: needs tensor parallelism (--tp above 1)");
}

TEST(PatternRequest, ComputeSettings) {
  const PatternConfig config = resolved({"--preset", "llama-3-8b", "--tflops", "800", "--compute-scale", "0.5"});
  EXPECT_EQ(config.compute.tflops, 800);
  EXPECT_EQ(config.compute.scale, 0.5);
  EXPECT_LT(config.compute.layer_milliseconds, 0);
  EXPECT_EQ(resolved({"--preset", "llama-3-8b", "--compute-ms", "0"}).compute.layer_milliseconds, 0);
  EXPECT_EQ(usage_error_of([] {
              parsed_flags({"--compute-ms", "-2"});
            }),
            "--compute-ms: must not be negative (got -2)");
}

class PatternFlagsDeepSpeed : public ::testing::Test {
 protected:
  std::string config_file(const std::string& text) { return directory_.write("ds_config.json", text); }
  commbench::testing::TempDir directory_;
};

TEST_F(PatternFlagsDeepSpeed, StageChoosesThePatternAndAutoUsesTheHiddenSize) {
  const std::string path = config_file(R"({"zero_optimization": {"stage": 3, "reduce_bucket_size": "auto",
      "stage3_prefetch_bucket_size": "auto", "stage3_param_persistence_threshold": "auto"},
      "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": "auto", "train_batch_size": 64})");
  const PatternConfig config = resolved({"--preset", "llama-3-8b", "--deepspeed-config", path, "--grad-accum", "4"});
  EXPECT_EQ(config.kind, PatternKind::zero3);
  EXPECT_EQ(config.zero.reduce_bucket_size, 4096u * 4096u);
  EXPECT_EQ(config.zero.stage3_param_persistence_threshold, 40960u);
  EXPECT_EQ(config.model.micro_batch, 2);
  EXPECT_EQ(error_of({"--preset", "llama-3-8b", "--deepspeed-config", path, "--grad-accum", "2"}),
            "--deepspeed-config " + path +
                ": train_batch_size 64 contradicts micro-batch 2 x accumulation 2 x data-parallel 8");
}

TEST_F(PatternFlagsDeepSpeed, ContradictionsNameBothSides) {
  const std::string path = config_file(R"({"zero_optimization": {"stage": 2}, "train_micro_batch_size_per_gpu": 4})");
  EXPECT_EQ(error_of({"--preset", "llama-3-8b", "--deepspeed-config", path, "--pattern", "zero3"}),
            "--deepspeed-config " + path + ": zero_optimization.stage 2 contradicts --pattern zero3");
  EXPECT_EQ(error_of({"--preset", "llama-3-8b", "--deepspeed-config", path, "--pattern", "fsdp"}),
            "--deepspeed-config " + path + ": DeepSpeed's ZeRO settings do not apply to --pattern fsdp");
  EXPECT_EQ(error_of({"--preset", "llama-3-8b", "--deepspeed-config", path, "--micro-batch", "2"}),
            "--deepspeed-config " + path + ": train_micro_batch_size_per_gpu 4 contradicts --micro-batch 2");
  const std::string broken = config_file("zero_optimization: {stage: 3}");
  EXPECT_EQ(error_of({"--preset", "llama-3-8b", "--deepspeed-config", broken}),
            "--deepspeed-config " + broken + ": not JSON (byte 1)");
  const std::string hpz = config_file(R"({"zero_optimization": {"stage": 2, "zero_hpz_partition_size": 8}})");
  EXPECT_EQ(error_of({"--preset", "llama-3-8b", "--deepspeed-config", hpz}),
            "zero_optimization.zero_hpz_partition_size 8: hpZ needs ZeRO stage 3, not zero2");
}

TEST_F(PatternFlagsDeepSpeed, UnknownKeysAreWarnings) {
  const std::string path = config_file(R"({"zero_optimization": {"stage": 3, "overlap_com": true}})");
  std::vector<std::string> warnings;
  resolve_pattern_config(parsed_flags({"--preset", "llama-3-8b", "--deepspeed-config", path}), 8, 8, warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "--deepspeed-config " + path + ": zero_optimization.overlap_com: unknown key, not read");
}

}  // namespace
}  // namespace commbench
