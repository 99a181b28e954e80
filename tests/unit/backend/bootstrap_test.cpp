#include <gtest/gtest.h>

#include <cmath>
#include <concepts>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
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

enum class Shade { light, dark };

// Structs as the exchange's users write them: a visitor naming each field once.
struct Reading {
  std::string name;
  Shade shade = Shade::light;
  std::optional<std::uint64_t> bytes;
  std::vector<double> figures;
  bool operator==(const Reading&) const = default;
};

template <typename Self, typename Visit>
requires std::same_as<std::remove_const_t<Self>, Reading>
void fields(Self& r, Visit& v) {
  v("name", r.name);
  v("shade", r.shade);
  v("bytes", r.bytes);
  v.derived("first_figure", [&] { return r.figures.front(); });  // would throw on none: never called
  v("figures", r.figures);
}

struct NodeReadings {
  Reading own;
  std::vector<Reading> ports;
  std::optional<Reading> spare;
  std::vector<std::vector<std::string>> lists;
  bool operator==(const NodeReadings&) const = default;
};

template <typename Self, typename Visit>
requires std::same_as<std::remove_const_t<Self>, NodeReadings>
void fields(Self& n, Visit& v) {
  v("own", n.own);
  v("ports", n.ports);
  v("spare", n.spare);
  v("lists", n.lists);
}

TEST(TypedExchange, StructsWithAFieldVisitorArriveWhole) {
  LocalBootstrap group;
  NodeReadings value;
  value.own = {"eth0", Shade::dark, std::uint64_t{1} << 40, {0.1, -0.0}};
  value.ports = {{"mlx5_0", Shade::light, std::nullopt, {}}, {"", Shade::dark, 0, {1e-300}}};
  value.lists = {{"a", "b,c", "d\ne"}, {}};
  EXPECT_EQ(all_gather_as(group, value), std::vector{value});
  EXPECT_EQ(broadcast_as(group, std::optional(value), 0), std::optional(value));
  EXPECT_EQ(broadcast_as(group, std::optional<NodeReadings>(), 0), std::nullopt);
  value.spare = value.own;
  EXPECT_EQ(broadcast_as(group, value, 0), value);
}

// A number travels as a number, a list as a list, a struct as its named fields; a derived
// field stays home.
TEST(TypedExchange, FieldsTravelByNameAndTypeNotAsText) {
  const Reading reading{"eth0", Shade::dark, std::nullopt, {2.5}};
  const nlohmann::json sent = exchange_detail::to_value(reading);
  EXPECT_EQ(sent, nlohmann::json::parse(R"({"name": "eth0", "shade": 1, "bytes": null, "figures": [2.5]})"));
  EXPECT_FALSE(sent.contains("first_figure"));
}

TEST(TypedExchange, AStructMissingAFieldIsAnInternalError) {
  const std::string sent = exchange_detail::encoded(std::map<std::string, int>{{"name", 3}});
  EXPECT_THROW(exchange_detail::decoded<Reading>(sent), BackendError);
  EXPECT_THROW(exchange_detail::decoded<std::vector<int>>(exchange_detail::encoded(4)), BackendError);
}

TEST(TypedExchange, BytesThatDoNotDecodeAreAnInternalError) {
  EXPECT_THROW(exchange_detail::decoded<double>(std::string("\xff\x00", 2)), BackendError);
}

}  // namespace
}  // namespace commbench
