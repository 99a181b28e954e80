#include <gtest/gtest.h>

#include "commbench/core/collective.hpp"
#include "commbench/core/dtype.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/name_lookup.hpp"
#include "commbench/core/op_case.hpp"
#include "commbench/core/reduce_op.hpp"
#include "usage_error.hpp"

namespace commbench {
namespace {

TEST(DataTypeNames, NcclTestsSpellingsAndAliases) {
  EXPECT_EQ(parse_data_type("float", "-d"), DataType::float32);
  EXPECT_EQ(parse_data_type("FP32", "-d"), DataType::float32);
  EXPECT_EQ(parse_data_type("half", "-d"), DataType::float16);
  EXPECT_EQ(parse_data_type("bf16", "-d"), DataType::bfloat16);
  EXPECT_EQ(parse_data_type("double", "-d"), DataType::float64);
  EXPECT_EQ(parse_data_type("uint8", "-d"), DataType::uint8);
  for (DataType t : all_data_types()) EXPECT_EQ(parse_data_type(name_of(t), "-d"), t);
  EXPECT_EQ(size_of(DataType::int8), 1u);
  EXPECT_EQ(size_of(DataType::bfloat16), 2u);
  EXPECT_EQ(size_of(DataType::uint32), 4u);
  EXPECT_EQ(size_of(DataType::float64), 8u);
  EXPECT_EQ(size_of(DataType::float8_e4m3), 1u);
  EXPECT_EQ(parse_data_type("fp8_e5m2", "-d"), DataType::float8_e5m2);
}

TEST(DataTypeNames, UnknownNameListsTheChoices) {
  try {
    parse_data_type("flaot", "-d/--dtype");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "-d/--dtype: unknown value 'flaot' (did you mean float?); expected one of: int8, uint8, int32, "
                 "uint32, int64, uint64, "
                 "half, bfloat16, float, double, f8e4m3, f8e5m2");
  }
  // A list flag also takes "all", and says so where it could have been given instead.
  EXPECT_EQ(testing::usage_error_of([] { parse_data_type_list("flaot", "-d"); }),
            "-d: unknown value 'flaot' (did you mean float?); expected one of: int8, uint8, int32, uint32, int64, "
            "uint64, half, bfloat16, "
            "float, double, f8e4m3, f8e5m2, all");
  EXPECT_EQ(testing::usage_error_of([] { parse_data_type_list("float,flaot", "-d"); }),
            "-d: unknown value 'flaot' (did you mean float?); expected one of: int8, uint8, int32, uint32, int64, "
            "uint64, half, bfloat16, "
            "float, double, f8e4m3, f8e5m2");
}

TEST(NearestName, SuggestsATypoFixButNotAGuess) {
  const std::vector<std::string_view> ops{"allreduce", "allgather", "reducescatter", "broadcast", "reduce"};
  EXPECT_EQ(detail::nearest_name("allreduc", ops), "allreduce");
  EXPECT_EQ(detail::nearest_name("ALLGATHR", ops), "allgather");
  EXPECT_EQ(detail::nearest_name("braodcast", ops), "broadcast");  // a swap is one step
  EXPECT_EQ(detail::nearest_name("gather", ops), "");              // too far from any
  EXPECT_EQ(detail::nearest_name("xyz", ops), "");
  EXPECT_EQ(detail::did_you_mean("reduse", ops), " (did you mean reduce?)");
  EXPECT_EQ(detail::did_you_mean("zzz", ops), "");
}

// The help lists what the parser accepts: every name it shows parses, the fp8 types and
// the aliases included, and "all" comes last among the canonical names.
TEST(Lists, AcceptedNamesAreExactlyWhatParses) {
  const auto names_in = [](std::string text) {
    for (char& c : text)
      if (c == '(' || c == ')' || c == ':') c = ',';
    std::vector<std::string> names;
    for (const std::string& item : detail::split_list(text))
      if (!item.empty() && item != "also") names.push_back(item);
    return names;
  };
  const std::string types = accepted_data_type_names();
  EXPECT_EQ(types.rfind("int8, uint8, int32, uint32, int64, uint64, half, bfloat16, float, double, f8e4m3, f8e5m2, all "
                        "(also: char, int, uint, fp16",
                        0),
            0u)
      << types;
  for (const std::string& name : names_in(types)) EXPECT_NO_THROW(parse_data_type_list(name, "-d")) << name;
  for (const std::string& name : names_in(accepted_reduce_op_names()))
    EXPECT_NO_THROW(parse_reduce_op_list(name, "-o")) << name;
  EXPECT_EQ(accepted_reduce_op_names(), "sum, prod, min, max, avg, all");
  const std::vector<std::string> collectives = names_in(accepted_collective_names());
  for (const std::string& name : collectives) EXPECT_NO_THROW(parse_collective_list(name, "--op")) << name;
  // The names (those of --op all, and alltoallv), "all", and seven aliases.
  EXPECT_EQ(collectives.size(), all_collectives().size() + 1 + 1 + 7);
}

TEST(Lists, AllCommaListsAndDuplicates) {
  EXPECT_EQ(parse_data_type_list("all", "-d").size(), 12u);
  const auto types = parse_data_type_list("float, int32,float", "-d");
  ASSERT_EQ(types.size(), 2u);
  EXPECT_EQ(types[0], DataType::float32);
  EXPECT_EQ(types[1], DataType::int32);
  EXPECT_THROW(parse_data_type_list("float,,int32", "-d"), UsageError);
  EXPECT_EQ(parse_reduce_op_list("all", "-o").size(), 5u);
  EXPECT_EQ(parse_reduce_op_list("max,min", "-o")[1], ReduceOp::min);
  EXPECT_THROW(parse_reduce_op("mean", "-o"), UsageError);
  EXPECT_EQ(parse_collective_list("all", "--op").size(), 7u);
  EXPECT_EQ(parse_collective_list("reduce_scatter,bcast", "--op")[1], Collective::broadcast);
  EXPECT_THROW(parse_collective("allreduc", "--op"), UsageError);
}

TEST(Placement, OutInBoth) {
  EXPECT_EQ(parse_placements("out", "--placement"), std::vector<Placement>{Placement::out_of_place});
  EXPECT_EQ(parse_placements("IN", "--placement"), std::vector<Placement>{Placement::in_place});
  EXPECT_EQ(parse_placements("both", "--placement").size(), 2u);
  EXPECT_THROW(parse_placements("inplace", "--placement"), UsageError);
}

}  // namespace
}  // namespace commbench
