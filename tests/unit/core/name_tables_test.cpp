// One table names an enum's values both ways: name_in prints what value_named and the
// parsers read, and every printed name parses back to its value.
#include <array>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "commbench/backend/local_gpu_links.hpp"
#include "commbench/core/collective.hpp"
#include "commbench/core/dtype.hpp"
#include "commbench/core/name_lookup.hpp"
#include "commbench/core/reduce_op.hpp"
#include "commbench/p2p/pair_schedule.hpp"
#include "commbench/pattern/framework_settings.hpp"
#include "commbench/pattern/parallel_layout.hpp"
#include "commbench/pattern/pattern_config.hpp"
#include "commbench/pattern/schedule.hpp"
#include "commbench/validate/threshold_rule.hpp"

namespace commbench {
namespace {

enum class Colour { red, green, blue };
using NamedColour = detail::NamedValue<Colour>;
constexpr std::array kColours{NamedColour{"red", Colour::red}, NamedColour{"crimson", Colour::red},
                              NamedColour{"green", Colour::green}};

TEST(NameTables, TheFirstEntryOfAValueIsItsName) {
  EXPECT_EQ(detail::name_in<Colour>(kColours, Colour::red), "red");
  EXPECT_EQ(detail::name_in<Colour>(kColours, Colour::green), "green");
  EXPECT_EQ(detail::name_in<Colour>(kColours, Colour::blue), "?");
  EXPECT_EQ(detail::name_in<Colour>(kColours, Colour::blue, ""), "");
}

TEST(NameTables, EveryEntryNamesItsValueAsWritten) {
  EXPECT_EQ(detail::value_named<Colour>(kColours, "crimson"), Colour::red);
  EXPECT_EQ(detail::value_named<Colour>(kColours, "green"), Colour::green);
  EXPECT_EQ(detail::value_named<Colour>(kColours, "Green"), std::nullopt);
  EXPECT_EQ(detail::value_named<Colour>(kColours, "blue"), std::nullopt);
}

template <typename Enum, typename Parse>
void expect_round_trip(std::initializer_list<Enum> every, Parse parse) {
  for (const Enum value : every) {
    EXPECT_NE(name_of(value), "?");
    EXPECT_EQ(parse(name_of(value)), value) << name_of(value);
  }
}

TEST(NameTables, EveryPrintedNameParsesBack) {
  const auto with_flag = [](auto parse) { return [parse](std::string_view name) { return parse(name, "--x"); }; };
  for (const DataType type : all_data_types()) EXPECT_EQ(parse_data_type(name_of(type), "-d"), type);
  for (const ReduceOp op : all_reduce_ops()) EXPECT_EQ(parse_reduce_op(name_of(op), "-o"), op);
  for (const Collective op : all_collectives()) EXPECT_EQ(parse_collective(name_of(op), "--op"), op);
  EXPECT_EQ(name_of(ReduceOp::none), "none");
  expect_round_trip({PatternKind::ddp, PatternKind::fsdp, PatternKind::zero1, PatternKind::zero2, PatternKind::zero3,
                     PatternKind::pipeline, PatternKind::tp, PatternKind::ep},
                    with_flag(parse_pattern_kind));
  expect_round_trip({FsdpSharding::full_shard, FsdpSharding::shard_grad_op, FsdpSharding::hybrid_shard,
                     FsdpSharding::no_shard},
                    with_flag(parse_fsdp_sharding));
  expect_round_trip({FsdpBackwardPrefetch::backward_pre, FsdpBackwardPrefetch::backward_post,
                     FsdpBackwardPrefetch::none},
                    with_flag(parse_fsdp_backward_prefetch));
  expect_round_trip({PairSchedule::all_pairs, PairSchedule::ring, PairSchedule::random},
                    with_flag(parse_pair_schedule));
  for (int index = 0; index < kGroupRoleCount; ++index) {
    const auto role = static_cast<GroupRole>(index);
    EXPECT_EQ(group_role_named(name_of(role)), role) << name_of(role);
  }
  expect_round_trip({StepPhase::forward, StepPhase::backward, StepPhase::optimizer},
                    [](std::string_view name) { return step_phase_named(name).value(); });
  expect_round_trip({GpuCopyMethod::copy_engine, GpuCopyMethod::sm_kernel, GpuCopyMethod::nccl},
                    [](std::string_view name) { return copy_method_named(name).value(); });
}

TEST(NameTables, ARulesPartsParseBackFromTheirNames) {
  for (const ThresholdMetric metric :
       {ThresholdMetric::busbw, ThresholdMetric::algbw, ThresholdMetric::time, ThresholdMetric::efficiency})
    for (const Comparison comparison :
         {Comparison::at_least, Comparison::at_most, Comparison::above, Comparison::below}) {
      const ThresholdRule rule =
          parse_threshold_rule(fmt::format("{}{}0.5", name_of(metric), name_of(comparison)), "--threshold");
      EXPECT_EQ(rule.metric, metric);
      EXPECT_EQ(rule.comparison, comparison);
    }
  for (const Reference reference : {Reference::baseline, Reference::theoretical, Reference::achievable})
    EXPECT_EQ(parse_threshold_rule(fmt::format("busbw>=0.9*{}", name_of(reference)), "--threshold").reference,
              reference);
  EXPECT_EQ(name_of(Reference::none), "");
}

}  // namespace
}  // namespace commbench
