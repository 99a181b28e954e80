// A sub-communicator made by split() keeps what identifies its ranks: their host names,
// their devices' bus ids, their count.
#include <gtest/gtest.h>

#include "mpi_test_support.hpp"

namespace commbench {
namespace {

TEST(MpiSplit, SubCommunicatorKeepsEachRanksIdentity) {
  auto world = world_backend();
  const int world_rank = world->group().rank();
  // Reversed order inside each half: the sub-communicator's ranks are renumbered by key.
  auto half = world->split(world_rank % 2, -world_rank);
  EXPECT_EQ(half->name(), world->name());
  EXPECT_EQ(half->library_version(), world->library_version());
  EXPECT_EQ(half->ranks(), half->group().size());
  EXPECT_EQ(half->ranks(), (world->ranks() + 1 - world_rank % 2) / 2);
  EXPECT_EQ(half->device_bus_ids(), world->device_bus_ids());  // the same devices (none on the host)
  EXPECT_EQ(half->device_descriptions(), world->device_descriptions());
  // Each member's host name in the sub-communicator is the one it has in the world.
  const auto members = half->group().all_gather(std::to_string(world_rank));
  ASSERT_EQ(members.size(), static_cast<std::size_t>(half->ranks()));
  for (std::size_t sub_rank = 0; sub_rank < members.size(); ++sub_rank) {
    const int member = std::stoi(members[sub_rank]);
    EXPECT_EQ(half->group().hostnames()[sub_rank], world->group().hostnames()[static_cast<std::size_t>(member)]);
    if (sub_rank > 0) EXPECT_LT(member, std::stoi(members[sub_rank - 1])) << "ordered by key";
  }
  EXPECT_EQ(half->group().hostname(), world->group().hostname());
  world->group().barrier();
}

}  // namespace
}  // namespace commbench
