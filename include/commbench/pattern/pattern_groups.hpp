// The communicators a schedule's steps run on: one Backend::split per group role any rank
// uses, made from the world backend with the layout's colour and key. Splitting is
// collective over the world, so every rank splits the same roles in GroupRole order,
// even a rank whose own schedule never uses one of them.
#pragma once

#include <array>
#include <memory>

#include "commbench/backend/backend.hpp"
#include "commbench/pattern/parallel_layout.hpp"
#include "commbench/pattern/schedule.hpp"

namespace commbench {

class PatternGroups {
 public:
  // Collective over `world`. The world role is `world` itself, never split. Throws
  // UsageError when the layout does not match the world's ranks.
  PatternGroups(Backend& world, const ParallelLayout& layout, const RankSchedule& schedule);
  // Collective: freeing a sub-communicator may wait for its peers (call under a guard).
  ~PatternGroups();
  PatternGroups(const PatternGroups&) = delete;
  PatternGroups& operator=(const PatternGroups&) = delete;

  // UsageError when no rank's schedule uses `role` (it was not split).
  Backend& backend(GroupRole role);
  bool has(GroupRole role) const;
  const ParallelLayout& layout() const { return layout_; }
  Backend& world() { return world_; }

 private:
  Backend& world_;
  ParallelLayout layout_;
  std::array<std::unique_ptr<Backend>, kGroupRoleCount> splits_;
};

}  // namespace commbench
