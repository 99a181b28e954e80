#include "commbench/pattern/schedule_json.hpp"

#include "commbench/pattern/pattern_description.hpp"

#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "schedule_test_support.hpp"

namespace commbench {
namespace {

std::vector<nlohmann::json> parsed_lines(const std::string& text) {
  std::vector<nlohmann::json> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

TEST(PatternScheduleJson, OneLinePerCollectiveWithNcclTestsBytes) {
  PatternConfig config = testing::config_of(PatternKind::fsdp, testing::small_llama(2), 2);
  const RankSchedule schedule = build_schedule(config, 1);
  const std::vector<nlohmann::json> lines = parsed_lines(schedule_json_lines(schedule));
  ASSERT_EQ(lines.size(),
            testing::count(schedule, [](const ScheduleStep& step) { return step.kind != StepKind::compute; }));
  const nlohmann::json& first = lines.front();
  // The root unit (embedding 1000 x 1024, final norm, head 1000 x 1024) gathered whole.
  EXPECT_EQ(first["op"], "allgather");
  EXPECT_EQ(first["bytes"], 2u * (2u * 1'024'000u + 1024u));
  EXPECT_EQ(first["group"], "data");
  EXPECT_EQ(first["stream"], "data");
  EXPECT_EQ(first["phase"], "forward");
  EXPECT_EQ(first["label"], "all-gather root unit");
  EXPECT_EQ(first["rank"], 1);
  EXPECT_EQ(first["dtype"], "bfloat16");
  for (const nlohmann::json& line : lines) {
    if (line["op"] != "reducescatter") continue;
    EXPECT_EQ(line["redop"], "sum");
    ASSERT_EQ(line["waits_for"].size(), 1u);
    const std::size_t waited = line["waits_for"][0];
    EXPECT_EQ(schedule.steps[waited].kind, StepKind::compute);
  }
}

TEST(PatternScheduleJson, PeerStepsNameTheirRoundAndComputeIsOptional) {
  PatternConfig config = testing::config_of(PatternKind::pipeline, testing::small_llama(2), 1, 1, 2);
  const RankSchedule schedule = build_schedule(config, 0);
  const std::vector<nlohmann::json> lines = parsed_lines(schedule_json_lines(schedule));
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.front()["op"], "sendrecv");
  EXPECT_EQ(lines.front()["group"], "pipeline");
  EXPECT_EQ(lines.front()["transfers"], nlohmann::json::parse("[[0, 1]]"));
  const std::vector<nlohmann::json> with_compute = parsed_lines(schedule_json_lines(schedule, true));
  EXPECT_EQ(with_compute.size(), schedule.steps.size());
  EXPECT_EQ(with_compute.front()["op"], "compute");
  EXPECT_TRUE(with_compute.front().contains("seconds"));
}

TEST(PatternDescription, NamesOnlyWhatThePatternReads) {
  PatternConfig config = testing::config_of(PatternKind::zero3, testing::small_llama(2), 4);
  const auto pairs = describe_pattern_config(config);
  const auto value_of = [&pairs](const std::string& name) {
    for (const auto& [key, value] : pairs)
      if (key == name) return value;
    return std::string("(absent)");
  };
  EXPECT_EQ(value_of("pattern"), "zero3");
  EXPECT_EQ(value_of("dp"), "4");
  EXPECT_EQ(value_of("zero_optimization.overlap_comm"), "1");
  EXPECT_EQ(value_of("zero_optimization.stage3_prefetch_bucket_size"), "50000000");
  EXPECT_EQ(value_of("zero_optimization.allgather_bucket_size"), "(absent)");
  EXPECT_EQ(value_of("bucket_cap_mb"), "(absent)");
  EXPECT_EQ(value_of("tflops"), "400");
}

}  // namespace
}  // namespace commbench
