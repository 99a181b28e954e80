// The names of the pattern layer's enums, as flags take them and reports print them.
#include <array>

#include "commbench/core/name_lookup.hpp"
#include "commbench/pattern/framework_settings.hpp"
#include "commbench/pattern/pattern_config.hpp"
#include "commbench/pattern/schedule.hpp"

namespace commbench {
namespace {

using NamedKind = detail::NamedValue<PatternKind>;
constexpr std::array kKindNames{NamedKind{"ddp", PatternKind::ddp},     NamedKind{"fsdp", PatternKind::fsdp},
                                NamedKind{"zero1", PatternKind::zero1}, NamedKind{"zero2", PatternKind::zero2},
                                NamedKind{"zero3", PatternKind::zero3}, NamedKind{"pipeline", PatternKind::pipeline},
                                NamedKind{"tp", PatternKind::tp},       NamedKind{"ep", PatternKind::ep}};

using NamedPhase = detail::NamedValue<StepPhase>;
constexpr std::array kPhaseNames{NamedPhase{"forward", StepPhase::forward}, NamedPhase{"backward", StepPhase::backward},
                                 NamedPhase{"optimizer", StepPhase::optimizer}};

// FSDP's own enum spellings, and lower-case ones for the command line.
using NamedSharding = detail::NamedValue<FsdpSharding>;
constexpr std::array kShardingNames{
    NamedSharding{"full_shard", FsdpSharding::full_shard}, NamedSharding{"shard_grad_op", FsdpSharding::shard_grad_op},
    NamedSharding{"hybrid_shard", FsdpSharding::hybrid_shard}, NamedSharding{"no_shard", FsdpSharding::no_shard}};

using NamedPrefetch = detail::NamedValue<FsdpBackwardPrefetch>;
constexpr std::array kPrefetchNames{NamedPrefetch{"backward_pre", FsdpBackwardPrefetch::backward_pre},
                                    NamedPrefetch{"backward_post", FsdpBackwardPrefetch::backward_post},
                                    NamedPrefetch{"none", FsdpBackwardPrefetch::none}};

}  // namespace

std::string_view name_of(PatternKind kind) { return detail::name_in<PatternKind>(kKindNames, kind); }

PatternKind parse_pattern_kind(std::string_view text, std::string_view flag) {
  return detail::lookup_name<PatternKind>(kKindNames, text, flag, detail::listed_names<PatternKind>(kKindNames));
}

std::string_view name_of(StepPhase phase) { return detail::name_in<StepPhase>(kPhaseNames, phase); }

std::optional<StepPhase> step_phase_named(std::string_view name) {
  return detail::value_named<StepPhase>(kPhaseNames, name);
}

double first_bucket_cap_mb(const DdpSettings& ddp) {
  if (ddp.first_bucket_mb) return *ddp.first_bucket_mb;
  return ddp.bucket_cap_given ? ddp.bucket_cap_mb : 1.0;
}

std::string_view name_of(FsdpSharding sharding) {
  static constexpr std::array<std::string_view, 4> kNames = {"FULL_SHARD", "SHARD_GRAD_OP", "HYBRID_SHARD", "NO_SHARD"};
  return kNames[static_cast<std::size_t>(sharding)];
}

FsdpSharding parse_fsdp_sharding(std::string_view text, std::string_view flag) {
  return detail::lookup_name<FsdpSharding>(kShardingNames, text, flag,
                                           detail::listed_names<FsdpSharding>(kShardingNames));
}

std::string_view name_of(FsdpBackwardPrefetch prefetch) {
  static constexpr std::array<std::string_view, 3> kNames = {"BACKWARD_PRE", "BACKWARD_POST", "NONE"};
  return kNames[static_cast<std::size_t>(prefetch)];
}

FsdpBackwardPrefetch parse_fsdp_backward_prefetch(std::string_view text, std::string_view flag) {
  return detail::lookup_name<FsdpBackwardPrefetch>(kPrefetchNames, text, flag,
                                                   detail::listed_names<FsdpBackwardPrefetch>(kPrefetchNames));
}

}  // namespace commbench
