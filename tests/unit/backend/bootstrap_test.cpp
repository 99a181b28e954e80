#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <map>
#include <string>
#include <vector>

#include "commbench/backend/local_bootstrap.hpp"
#include "commbench/backend/typed_exchange.hpp"

namespace commbench {
namespace {

// Figures gathered for per-pair verdicts must arrive bit for bit, not rounded by text.
TEST(TypedExchange, EveryDoubleArrivesBitForBit) {
  LocalBootstrap group;
  for (const double value : {0.1, 1.0 / 3.0, 6.02214076e23, 1e-300, std::numeric_limits<double>::denorm_min(),
                             -2.5, 0.0, -0.0, std::numeric_limits<double>::infinity()}) {
    const std::vector<double> gathered = all_gather_as(group, value);
    ASSERT_EQ(gathered.size(), 1u);
    EXPECT_EQ(gathered[0], value);
    EXPECT_EQ(std::signbit(gathered[0]), std::signbit(value));
  }
}

TEST(TypedExchange, ContainersArriveWhole) {
  LocalBootstrap group;
  const std::map<std::string, std::vector<std::uint64_t>> value{{"a", {1, 2, std::uint64_t{1} << 63}}, {"", {}}};
  EXPECT_EQ(all_gather_as(group, value), std::vector{value});
  EXPECT_EQ(broadcast_as(group, std::string("with\0zero", 9), 0), std::string("with\0zero", 9));
}

TEST(TypedExchange, BytesThatDoNotDecodeAreAnInternalError) {
  EXPECT_THROW(exchange_detail::decoded<double>(std::string("\xff\x00", 2)), BackendError);
}

}  // namespace
}  // namespace commbench
