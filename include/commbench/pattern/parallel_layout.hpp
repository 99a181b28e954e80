// How a training job's ranks are grouped: tensor (tp) x pipeline (pp) x data (dp)
// parallel, with expert parallel (ep) carved out of the data-parallel ranks, laid out as
// Megatron-LM lays them out (its default order "tp-cp-ep-dp-pp"): tp innermost, so a
// tensor-parallel group is consecutive ranks and stays within a node; then data; then
// pipeline outermost.
//
//   world rank = tp_rank + tp * (dp_rank + dp * pp_rank)
//   ep groups:  the dp ranks of one (tp_rank, pp_rank) split into consecutive blocks of ep
//
// Each role's communicator is made with Backend::split(colour, key); colour_of() and
// key_of() give the arguments, the same on every rank, so every member agrees.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace commbench {

// The communicators a step's collectives run on.
enum class GroupRole {
  world,        // every rank
  tensor,       // tp ranks of one (dp, pp) position
  pipeline,     // pp ranks of one (tp, dp) position, in stage order
  data,         // dp ranks of one (tp, pp) position (the gradient allreduce/reduce-scatter)
  expert,       // ep consecutive dp ranks: MoE token dispatch/combine (alltoallv)
  expert_data,  // the dp ranks holding the same experts: expert gradients' reduction
  intra_node,   // the data group's members on this node (HYBRID_SHARD's shard group, hpZ)
  inter_node,   // the data group's members with the same position on every node
};
inline constexpr int kGroupRoleCount = 8;

std::string_view name_of(GroupRole role);  // "world", "tensor", ...
// The role `name` names as name_of spells it; nullopt for none.
std::optional<GroupRole> group_role_named(std::string_view name);

struct ParallelLayout {
  int tensor = 1;
  int pipeline = 1;
  int data = 1;
  int expert = 1;          // divides data
  int ranks_per_node = 1;  // for intra_node / inter_node

  // tensor x pipeline x data; the world must have exactly this many ranks.
  int ranks() const { return tensor * pipeline * data; }

  // Throws UsageError naming `flag_prefix` + the offending dimension ("--tp", "--pp",
  // "--dp", "--ep") when a dimension is below 1, ep does not divide dp, or the product is
  // not `world_ranks`.
  void validate(int world_ranks) const;

  // Coordinates of a world rank.
  int tensor_rank(int world_rank) const;
  int data_rank(int world_rank) const;
  int pipeline_rank(int world_rank) const;  // the pipeline stage

  // Backend::split arguments for `role` seen from `world_rank`: equal colours form one
  // communicator; the key orders its members (stage order for pipeline, etc.).
  int colour_of(GroupRole role, int world_rank) const;
  int key_of(GroupRole role, int world_rank) const;
  // The world ranks of `world_rank`'s group for `role`, in key order.
  std::vector<int> members(GroupRole role, int world_rank) const;
  // Ranks in that group.
  int group_size(GroupRole role, int world_rank) const;
};

}  // namespace commbench
