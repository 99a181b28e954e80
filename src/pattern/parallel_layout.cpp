#include "commbench/pattern/parallel_layout.hpp"

#include <array>
#include <string>

#include <fmt/format.h>

#include "commbench/core/error.hpp"
#include "commbench/core/name_lookup.hpp"

namespace commbench {

namespace {

// As schedules and reports name the groups.
using NamedRole = detail::NamedValue<GroupRole>;
constexpr std::array<NamedRole, kGroupRoleCount> kRoleNames{
    NamedRole{"world", GroupRole::world},       NamedRole{"tensor", GroupRole::tensor},
    NamedRole{"pipeline", GroupRole::pipeline}, NamedRole{"data", GroupRole::data},
    NamedRole{"expert", GroupRole::expert},     NamedRole{"expert_data", GroupRole::expert_data},
    NamedRole{"intra_node", GroupRole::intra_node}, NamedRole{"inter_node", GroupRole::inter_node}};

}  // namespace

std::string_view name_of(GroupRole role) { return detail::name_in<GroupRole>(kRoleNames, role); }

std::optional<GroupRole> group_role_named(std::string_view name) {
  return detail::value_named<GroupRole>(kRoleNames, name);
}

void ParallelLayout::validate(int world_ranks) const {
  const std::array<std::pair<std::string_view, int>, 4> dimensions = {
      {{"--tp", tensor}, {"--pp", pipeline}, {"--dp", data}, {"--ep", expert}}};
  for (const auto& [flag, value] : dimensions)
    if (value < 1) throw UsageError(fmt::format("{} {}: must be at least 1", flag, value));
  if (data % expert != 0)
    throw UsageError(
        fmt::format("--ep {}: must divide the data-parallel size {} (experts are sharded over "
                    "data-parallel ranks)",
                    expert, data));
  if (ranks() != world_ranks)
    throw UsageError(fmt::format("--tp {} x --pp {} x --dp {} = {} ranks, but the job has {}", tensor, pipeline, data,
                                 ranks(), world_ranks));
  if (ranks_per_node < 1) throw UsageError(fmt::format("ranks per node {}: must be at least 1", ranks_per_node));
}

int ParallelLayout::tensor_rank(int world_rank) const { return world_rank % tensor; }
int ParallelLayout::data_rank(int world_rank) const { return (world_rank / tensor) % data; }
int ParallelLayout::pipeline_rank(int world_rank) const { return world_rank / (tensor * data); }

namespace {

// Colours only need to be equal within a group and distinct between groups, so each is a
// mixed-radix number of the coordinates the group does not span.
int node_of(const ParallelLayout& layout, int world_rank) { return world_rank / layout.ranks_per_node; }
int local_position(const ParallelLayout& layout, int world_rank) { return world_rank % layout.ranks_per_node; }

}  // namespace

int ParallelLayout::colour_of(GroupRole role, int world_rank) const {
  const int tp = tensor_rank(world_rank);
  const int dp = data_rank(world_rank);
  const int pp = pipeline_rank(world_rank);
  const int tp_pp = tp + tensor * pp;  // the position a data-parallel group shares
  switch (role) {
    case GroupRole::world: return 0;
    case GroupRole::tensor: return dp + data * pp;
    case GroupRole::pipeline: return tp + tensor * dp;
    case GroupRole::data: return tp_pp;
    case GroupRole::expert: return tp_pp * (data / expert) + dp / expert;
    case GroupRole::expert_data: return tp_pp * expert + dp % expert;
    case GroupRole::intra_node: return tp_pp * (ranks() / ranks_per_node + 1) + node_of(*this, world_rank);
    case GroupRole::inter_node: return tp_pp * ranks_per_node + local_position(*this, world_rank);
  }
  return 0;
}

int ParallelLayout::key_of(GroupRole role, int world_rank) const {
  switch (role) {
    case GroupRole::tensor: return tensor_rank(world_rank);
    case GroupRole::pipeline: return pipeline_rank(world_rank);
    case GroupRole::data:
    case GroupRole::expert:
    case GroupRole::expert_data:
    case GroupRole::intra_node:
    case GroupRole::inter_node: return data_rank(world_rank);
    case GroupRole::world: return world_rank;
  }
  return world_rank;
}

std::vector<int> ParallelLayout::members(GroupRole role, int world_rank) const {
  const int colour = colour_of(role, world_rank);
  std::vector<int> found;
  for (int candidate = 0; candidate < ranks(); ++candidate)
    if (colour_of(role, candidate) == colour) found.push_back(candidate);
  // Every role's key grows with the world rank within a group, so world order is key order.
  return found;
}

int ParallelLayout::group_size(GroupRole role, int world_rank) const {
  return static_cast<int>(members(role, world_rank).size());
}

}  // namespace commbench
