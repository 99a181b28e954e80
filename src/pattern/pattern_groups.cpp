#include "commbench/pattern/pattern_groups.hpp"

#include "commbench/core/error.hpp"

namespace commbench {
namespace {

int role_bit(GroupRole role) { return 1 << static_cast<int>(role); }

}  // namespace

PatternGroups::PatternGroups(Backend& world, const ParallelLayout& layout, const RankSchedule& schedule)
    : world_(world), layout_(layout) {
  layout_.validate(world.ranks());
  int used = 0;
  for (const ScheduleStep& step : schedule.steps)
    if (step.kind != StepKind::compute) used |= role_bit(step.group);
  for (const PlannedPeerRound& round : schedule.peer_rounds) used |= role_bit(round.group);
  // Pipeline stages' schedules differ: a role one rank never uses may be another's.
  used = world.group().bitwise_or(used);
  const int rank = world.group().rank();
  for (int index = 0; index < kGroupRoleCount; ++index) {
    const auto role = static_cast<GroupRole>(index);
    if (role == GroupRole::world || (used & role_bit(role)) == 0) continue;
    splits_[static_cast<std::size_t>(index)] = world.split(layout_.colour_of(role, rank), layout_.key_of(role, rank));
  }
}

PatternGroups::~PatternGroups() = default;

bool PatternGroups::has(GroupRole role) const {
  return role == GroupRole::world || splits_[static_cast<std::size_t>(role)] != nullptr;
}

Backend& PatternGroups::backend(GroupRole role) {
  if (role == GroupRole::world) return world_;
  const auto& split = splits_[static_cast<std::size_t>(role)];
  if (split == nullptr)
    throw UsageError("pattern: no rank's schedule uses the " + std::string(name_of(role)) + " group");
  return *split;
}

}  // namespace commbench
