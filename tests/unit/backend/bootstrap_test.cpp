#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "commbench/backend/local_bootstrap.hpp"

namespace commbench {
namespace {

// Figures gathered for per-pair verdicts must arrive bit for bit, not rounded by text.
TEST(AllGatherExact, EveryDoubleArrivesBitForBit) {
  LocalBootstrap group;
  for (const double value : {0.1, 1.0 / 3.0, 6.02214076e23, 1e-300, std::numeric_limits<double>::denorm_min(),
                             -2.5, 0.0}) {
    const std::vector<double> gathered = all_gather_exact(group, value);
    ASSERT_EQ(gathered.size(), 1u);
    EXPECT_EQ(gathered[0], value);
    EXPECT_EQ(std::signbit(gathered[0]), std::signbit(value));
  }
}

}  // namespace
}  // namespace commbench
