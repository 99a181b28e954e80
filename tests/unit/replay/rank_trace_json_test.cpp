// One rank's reading as JSON and back, as the ranks of a divided reading send it: every
// member of RankTrace, TracedCollective and StepWindow is written and read back to the
// same value, and a member added to those structs without being written fails here.
#include "commbench/replay/rank_trace_json.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "usage_error.hpp"

namespace commbench {
namespace {

using testing::usage_error_of;

// Converts to any member's type: an aggregate's members are counted by how many of these
// its braces take.
struct AnyMember {
  template <typename T>
  operator T() const;
};

template <typename T, typename... Taken>
constexpr std::size_t member_count() {
  if constexpr (requires { T{Taken{}..., AnyMember{}}; })
    return member_count<T, Taken..., AnyMember>();
  else
    return sizeof...(Taken);
}

// Every member away from its default, doubles among them that no short decimal holds.
RankTrace every_member_set() {
  TracedCollective call;
  call.op = "allgather";
  call.collective = Collective::allgather;
  call.dtype = "bfloat16";
  call.bytes = 123456789012345ULL;
  call.bytes_known = false;
  call.group_ranks = 64;
  call.issued_us = 1733561234567890.1 + 0.3;
  call.thread = 4294967297LL;  // wider than 32 bits, as a tid can be
  call.sequence = 8589934593LL;
  call.process_group = "data_parallel";
  call.start_us = 1.0 / 3.0;
  call.end_us = 2.0 / 3.0;
  call.step = 7;
  call.name = "ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
  call.nccl_algo = "RING";
  call.nccl_proto = "LL";
  call.timed_by_backend = true;
  call.run_us = 1e6 / 7.0;
  RankTrace trace;
  trace.path = "traces/rank3.json.gz";
  trace.rank = 3;
  trace.world_size = 64;
  trace.backend = "nccl";
  trace.host = "node-07";
  trace.epoch_offset_us = 1790857026000000.0 + 1.0 / 3.0;
  trace.collectives = {call, call};
  trace.collectives.back().collective.reset();
  trace.collectives.back().op = "barrier";
  trace.steps = {{5, 0.1, 0.7}, {6, 0.7 + 1e-9, 1.9}};
  trace.call_times_only = true;
  trace.exposed_seconds = 0.1 + 0.2;
  trace.exposed_on_the_training_thread = true;
  trace.backend_busy_us = {{0.1, 0.25}, {1.0 / 3.0, 1e9 + 0.5}};
  trace.unclaimed_runs = 75;
  trace.unclaimed_seconds = 0.165 / 3.0;
  trace.pairing = "external id";
  return trace;
}

TEST(RankTraceJson, EveryMemberIsWrittenAndNoneIsLeftAtItsDefault) {
  const nlohmann::json set = nlohmann::json::parse(rank_trace_json(every_member_set()));
  const nlohmann::json defaults = nlohmann::json::parse(rank_trace_json(RankTrace{}));
  ASSERT_EQ(set.size(), member_count<RankTrace>());
  ASSERT_EQ(set["collectives"][0].size(), member_count<TracedCollective>());
  ASSERT_EQ(set["steps"][0].size(), member_count<StepWindow>());
  const nlohmann::json default_call =
      nlohmann::json::parse(rank_trace_json(RankTrace{.collectives = {{}}}))["collectives"][0];
  for (const auto& [key, value] : set.items()) EXPECT_NE(value, defaults[key]) << key;
  for (const auto& [key, value] : set["collectives"][0].items()) EXPECT_NE(value, default_call[key]) << key;
}

TEST(RankTraceJson, ReadsBackTheSameReading) {
  const RankTrace trace = every_member_set();
  const std::string text = rank_trace_json(trace);
  const RankTrace read = rank_trace_from_json(text, "rank 3");
  EXPECT_EQ(rank_trace_json(read), text);
  EXPECT_EQ(read.collectives.front().issued_us, trace.collectives.front().issued_us);
  EXPECT_EQ(read.collectives.front().collective, Collective::allgather);
  EXPECT_FALSE(read.collectives.back().collective.has_value());
  EXPECT_EQ(read.steps.back().start_us, 0.7 + 1e-9);
  EXPECT_EQ(read.exposed_seconds, 0.1 + 0.2);
  EXPECT_EQ(read.backend_busy_us, trace.backend_busy_us);
  EXPECT_EQ(read.unclaimed_runs, 75U);
  EXPECT_EQ(read.collectives.front().thread, 4294967297LL);
  EXPECT_EQ(read.epoch_offset_us, trace.epoch_offset_us);
  EXPECT_FALSE(rank_trace_from_json(rank_trace_json(RankTrace{}), "rank 0").exposed_seconds.has_value());
}

TEST(RankTraceJson, NumbersJsonCannotHoldAreSentAsText) {
  RankTrace trace = every_member_set();
  trace.collectives.front().issued_us = std::numeric_limits<double>::quiet_NaN();
  trace.steps.front().end_us = std::numeric_limits<double>::infinity();
  trace.unclaimed_seconds = -std::numeric_limits<double>::infinity();
  const RankTrace read = rank_trace_from_json(rank_trace_json(trace), "rank 3");
  EXPECT_TRUE(std::isnan(read.collectives.front().issued_us));
  EXPECT_EQ(read.steps.front().end_us, std::numeric_limits<double>::infinity());
  EXPECT_EQ(read.unclaimed_seconds, -std::numeric_limits<double>::infinity());
  nlohmann::json wrong = nlohmann::json::parse(rank_trace_json(trace));
  wrong["unclaimed_seconds"] = "many";
  const std::string error = usage_error_of([&] { rank_trace_from_json(wrong.dump(), "rank 3"); });
  EXPECT_EQ(error, "rank 3: not a rank's reading ('many' is not a number)");
}

TEST(RankTraceJson, TextThatIsNoReadingNamesWhereItCameFrom) {
  const std::string cut = usage_error_of([] { rank_trace_from_json("{\"path\": ", "rank 5"); });
  EXPECT_EQ(cut.rfind("rank 5: not a rank's reading (", 0), 0U) << cut;
  nlohmann::json missing = nlohmann::json::parse(rank_trace_json(every_member_set()));
  missing.erase("host");
  const std::string without = usage_error_of([&] { rank_trace_from_json(missing.dump(), "rank 5"); });
  EXPECT_NE(without.find("host"), std::string::npos) << without;
}

}  // namespace
}  // namespace commbench
