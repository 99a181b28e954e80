// The knobs bench-patterns --tune searches (pattern/tuning_space.hpp): each framework's
// own keys, their candidates, and the settings file each framework reads back.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>
#include <nlohmann/json.hpp>

#include "commbench/core/error.hpp"
#include "commbench/pattern/deepspeed_config.hpp"
#include "commbench/pattern/model_tensors.hpp"
#include "commbench/pattern/tuning_space.hpp"
#include "schedule_test_support.hpp"

namespace commbench {
namespace {

using testing::config_of;
using testing::small_llama;

const TuningKnob& knob_named(const std::vector<TuningKnob>& knobs, const std::string& key) {
  for (const TuningKnob& knob : knobs)
    if (knob.key == key) return knob;
  throw std::runtime_error("no knob " + key);
}

std::vector<std::string> keys_of(const std::vector<TuningKnob>& knobs) {
  std::vector<std::string> keys;
  for (const TuningKnob& knob : knobs) keys.push_back(knob.key);
  return keys;
}

TEST(TuningSpace, EachFrameworkOffersItsOwnKeysWithTheConfigsValueAmongTheCandidates) {
  PatternConfig ddp = config_of(PatternKind::ddp, small_llama(4), 4);
  ddp.ddp.bucket_cap_mb = 0.001;
  const auto ddp_knobs = tuning_space(ddp);
  ASSERT_EQ(ddp_knobs.size(), 1u);
  EXPECT_EQ(ddp_knobs[0].key, "bucket_cap_mb");
  EXPECT_EQ(ddp_knobs[0].candidates.front(), "0.001");  // the start, then DDP's range
  EXPECT_EQ(ddp_knobs[0].candidates.size(), 8u);

  const auto zero3 = tuning_space(config_of(PatternKind::zero3, small_llama(4), 4));
  // The eight knobs users search.
  EXPECT_EQ(keys_of(zero3), (std::vector<std::string>{
                      "zero_optimization.overlap_comm", "zero_optimization.contiguous_gradients",
                      "zero_optimization.sub_group_size", "zero_optimization.reduce_bucket_size",
                      "zero_optimization.stage3_prefetch_bucket_size",
                      "zero_optimization.stage3_param_persistence_threshold",
                      "zero_optimization.stage3_max_live_parameters", "zero_optimization.stage3_max_reuse_distance"}));
  // DeepSpeed's "auto" values for hidden 1024 are among the bucket candidates, and so are
  // the ends of the users' range: one element, DeepSpeed's default.
  const auto& reduce = knob_named(zero3, "zero_optimization.reduce_bucket_size").candidates;
  EXPECT_NE(std::find(reduce.begin(), reduce.end(), std::to_string(1024 * 1024)), reduce.end());
  EXPECT_NE(std::find(reduce.begin(), reduce.end(), "500000000"), reduce.end());
  EXPECT_EQ(reduce.front(), "1");
  // Persistence reaches the largest parameter: every parameter whole on every rank.
  std::uint64_t largest = 0;
  for (const ParameterTensor& tensor : model_tensors(small_llama(4))) largest = std::max(largest, tensor.elements);
  const auto& persistence = knob_named(zero3, "zero_optimization.stage3_param_persistence_threshold").candidates;
  EXPECT_EQ(persistence.back(), std::to_string(std::max<std::uint64_t>(largest, 10'000'000)));
  EXPECT_NE(std::find(persistence.begin(), persistence.end(), std::to_string(largest)), persistence.end());

  const auto fsdp = tuning_space(config_of(PatternKind::fsdp, small_llama(2), 4));
  EXPECT_EQ(knob_named(fsdp, "fsdp_unit_layers").candidates, (std::vector<std::string>{"1", "2"}));  // no 4 of 2
  // fully_shard (the default) has reshard_after_forward and neither of the wrapper's
  // backward_prefetch and limit_all_gathers; the wrapper has no reshard_after_forward.
  EXPECT_EQ(keys_of(fsdp), (std::vector<std::string>{"reshard_after_forward", "forward_prefetch", "fsdp_unit_layers"}));
  PatternConfig wrapper = config_of(PatternKind::fsdp, small_llama(2), 4);
  wrapper.fsdp.version = 1;
  EXPECT_EQ(keys_of(tuning_space(wrapper)),
            (std::vector<std::string>{"backward_prefetch", "forward_prefetch", "limit_all_gathers", "fsdp_unit_layers"}));
  PatternConfig hybrid = config_of(PatternKind::fsdp, small_llama(2), 4);
  hybrid.fsdp.sharding = FsdpSharding::hybrid_shard;
  EXPECT_EQ(keys_of(tuning_space(hybrid)), (std::vector<std::string>{"forward_prefetch", "fsdp_unit_layers"}));

  EXPECT_THROW(tuning_space(config_of(PatternKind::pipeline, small_llama(4), 1, 1, 4)), UsageError);
}

TEST(TuningSpace, WithKnobChangesOnlyThatKnob) {
  const PatternConfig start = config_of(PatternKind::zero3, small_llama(4), 4);
  const PatternConfig changed = with_knob(start, "zero_optimization.reduce_bucket_size", "5000000");
  EXPECT_EQ(changed.zero.reduce_bucket_size, 5'000'000u);
  EXPECT_EQ(changed.zero.stage3_prefetch_bucket_size, start.zero.stage3_prefetch_bucket_size);
  EXPECT_EQ(knob_value(changed, "zero_optimization.overlap_comm"), "true");  // stage 3's default
  const PatternConfig no_overlap = with_knob(start, "zero_optimization.overlap_comm", "false");
  EXPECT_FALSE(no_overlap.zero.overlaps(3));
  EXPECT_THROW(with_knob(start, "bucket_cap_mb", "25"), UsageError);
  EXPECT_THROW(with_knob(start, "zero_optimization.reduce_bucket_size", "-1"), UsageError);
}

TEST(TuningSpace, TheDsConfigFragmentReadsBackAsTheTunedSettings) {
  PatternConfig config = config_of(PatternKind::zero3, small_llama(4), 4);
  config = with_knob(config, "zero_optimization.overlap_comm", "false");
  config = with_knob(config, "zero_optimization.reduce_bucket_size", "20000000");
  config = with_knob(config, "zero_optimization.stage3_max_live_parameters", "300000000");
  const std::string text = tuned_settings_json(config);
  std::vector<std::string> warnings;
  const DeepSpeedConfig read = parse_deepspeed_config(text, "fragment", config.model.hidden, warnings);
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  ASSERT_EQ(read.stage, 3);
  EXPECT_FALSE(read.zero.overlaps(3));
  EXPECT_EQ(read.zero.reduce_bucket_size, 20'000'000u);
  EXPECT_EQ(read.zero.stage3_max_live_parameters, 300'000'000u);
  EXPECT_EQ(read.zero.stage3_prefetch_bucket_size, config.zero.stage3_prefetch_bucket_size);
  EXPECT_EQ(read.zero.stage3_param_persistence_threshold, config.zero.stage3_param_persistence_threshold);
  // Numbers are JSON numbers, not strings: DeepSpeed's pydantic fields want integers.
  EXPECT_TRUE(nlohmann::json::parse(text)["zero_optimization"]["reduce_bucket_size"].is_number_integer());
}

TEST(TuningSpace, DdpAndFsdpSettingsAreTheConstructorsKeywordArguments) {
  PatternConfig ddp = config_of(PatternKind::ddp, small_llama(4), 4);
  EXPECT_DOUBLE_EQ(first_bucket_cap_mb(ddp.ddp), 1);
  ddp = with_knob(ddp, "bucket_cap_mb", "50");
  EXPECT_EQ(nlohmann::json::parse(tuned_settings_json(ddp)), nlohmann::json({{"bucket_cap_mb", 50}}));
  // The trial passes bucket_cap_mb=50 to DDP, which then caps its first bucket at 50 too.
  EXPECT_DOUBLE_EQ(first_bucket_cap_mb(ddp.ddp), 50);
  PatternConfig wrapper = config_of(PatternKind::fsdp, small_llama(4), 4);
  wrapper.fsdp.version = 1;
  wrapper = with_knob(wrapper, "backward_prefetch", "NONE");
  wrapper = with_knob(wrapper, "fsdp_unit_layers", "2");
  const nlohmann::json kwargs = nlohmann::json::parse(tuned_settings_json(wrapper));
  EXPECT_EQ(kwargs, nlohmann::json({{"backward_prefetch", "NONE"},
                                    {"forward_prefetch", false},
                                    {"limit_all_gathers", true}}));
  EXPECT_NE(tuned_settings_usage(wrapper).find("2 transformer blocks per unit"), std::string::npos);
}

TEST(TuningSpace, FullyShardKeepsUnitsGatheredAsShardGradOpAndWritesEveryKnob) {
  const PatternConfig start = config_of(PatternKind::fsdp, small_llama(4), 4);
  EXPECT_EQ(knob_value(start, "reshard_after_forward"), "true");
  const PatternConfig kept = with_knob(start, "reshard_after_forward", "false");
  EXPECT_EQ(kept.fsdp.sharding, FsdpSharding::shard_grad_op);
  EXPECT_EQ(with_knob(kept, "reshard_after_forward", "true").fsdp.sharding, FsdpSharding::full_shard);
  EXPECT_THROW(with_knob(start, "backward_prefetch", "NONE"), UsageError);
  EXPECT_THROW(with_knob(start, "reshard_after_forward", "sometimes"), UsageError);
  const PatternConfig tuned = with_knob(with_knob(kept, "forward_prefetch", "true"), "fsdp_unit_layers", "2");
  EXPECT_EQ(nlohmann::json::parse(tuned_settings_json(tuned)),
            nlohmann::json({{"reshard_after_forward", false}, {"forward_prefetch", true}, {"fsdp_unit_layers", 2}}));
  EXPECT_NE(tuned_settings_usage(tuned).find("set_modules_to_forward_prefetch"), std::string::npos);
}

}  // namespace
}  // namespace commbench
