#include "commbench/analysis/collectives_soak.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

namespace commbench {
namespace {

OpCase case_of(std::uint64_t bytes) {
  OpCase c;
  c.op = Collective::allreduce;
  c.dtype = DataType::float32;
  c.redop = ReduceOp::sum;
  c.shape.bytes = bytes;
  return c;
}

NodeNic rail(const std::string& node, bool flagged) {
  NodeNic nic;
  nic.node = node;
  nic.traffic.device = "eth0";
  nic.rail = true;
  nic.flag = flagged ? "its busiest interval reached 0.05 GB/s" : "";
  return nic;
}

// Two cases over 40 intervals of 1 s; the 4 MiB case dips from 10 to 19 while node b's rail
// is flagged, the 1 MiB case wobbles only.
CollectivesSoak soaked() {
  CollectivesSoak soak(40, 1, SoakRule{});
  for (int interval = 0; interval < 40; ++interval) {
    const bool dipping = interval >= 10 && interval < 20;
    for (std::uint64_t bytes : {std::uint64_t{1} << 20, std::uint64_t{4} << 20}) {
      ResultRow row;
      const double wobble = 1 + 0.02 * std::sin(interval * 1.3 + static_cast<double>(bytes >> 20));
      row.busbw_gbps = 10 * wobble * (dipping && bytes == (4u << 20) ? 0.1 : 1);
      soak.add(case_of(bytes), interval, interval, interval + 0.5, row,
               {rail("a", false), rail("b", dipping && bytes == (4u << 20))});
      EXPECT_EQ(row.extra.size(), 2u);
      EXPECT_EQ(row.extra[0].name, "interval");
      EXPECT_EQ(std::get<std::int64_t>(row.extra[0].value), interval);
    }
  }
  return soak;
}

TEST(CollectivesSoak, FindsTheDipOfTheCaseThatDippedAndTheRailThatFellShort) {
  const CollectivesSoak soak = soaked();
  EXPECT_EQ(soak.intervals(), 40);
  const std::vector<CaseDip> dips = soak.dips();
  ASSERT_EQ(dips.size(), 1u);
  EXPECT_EQ(dips[0].what, describe(case_of(4 << 20)));
  EXPECT_EQ(dips[0].first_interval, 10);
  EXPECT_EQ(dips[0].last_interval, 19);
  EXPECT_DOUBLE_EQ(dips[0].end_s, 19.5);
  EXPECT_TRUE(dips[0].fails);
  EXPECT_EQ(dips[0].short_rails, std::vector<std::string>{"b eth0 (short in 10 of 10 intervals)"});
  EXPECT_EQ(dips[0].nodes, std::vector<std::string>{"b"});
  const std::string text = soak.console_text(dips);
  // The readings span 39.5 s: the last interval's case ended half a second in.
  EXPECT_NE(text.find("# soak: 40 intervals over 39.5 s; 1 dip\n"), std::string::npos) << text;
  EXPECT_NE(text.find("# FAIL allreduce 4MiB"), std::string::npos) << text;
  EXPECT_NE(text.find("\n--exclude=b\n"), std::string::npos) << text;
  const nlohmann::ordered_json section = soak.json_section(dips);
  EXPECT_EQ(section["intervals"], 40);
  ASSERT_EQ(section["events"].size(), 1u);
  EXPECT_EQ(section["events"][0]["result"], "fail");
  EXPECT_EQ(section["events"][0]["nodes"], nlohmann::ordered_json::array({"b"}));
}

TEST(CollectivesSoak, AnInterruptedSoakSaysHowLongItRanOfTheTimeAskedFor) {
  CollectivesSoak soak(60, 1, SoakRule{});
  for (int interval = 0; interval < 3; ++interval) {
    ResultRow row;
    row.busbw_gbps = 10;
    soak.add(case_of(1 << 20), interval, interval, interval + 0.2, row, {});
  }
  EXPECT_EQ(soak.console_text(soak.dips()),
            "# soak: 3 intervals over 2.2 s (stopped before the 60 s asked for); 0 dips\n");
}

TEST(CollectivesSoak, OneCaseHeldUpForFifteenSecondsIsADipOverThatTime) {
  // Issue 55: interval 25's case lasted 15 s, one reading; two readings of 2 s (a stalled
  // process) in intervals 10 and 11 are too short to count for more than themselves, and
  // put interval 25 at 27 s.
  CollectivesSoak soak(60, 1, SoakRule{});
  double start = 0;
  for (int interval = 0; interval < 40; ++interval) {
    const bool held = interval == 25, stalled = interval == 10 || interval == 11;
    const double end = start + (held ? 15 : stalled ? 2 : 0.3);
    ResultRow row;
    row.busbw_gbps = held ? 0.05 : stalled ? 3 : 10 + 0.01 * (interval % 5);
    soak.add(case_of(4 << 20), interval, start, end, row, {});
    start = std::max(end, start + 1);
  }
  const std::vector<CaseDip> dips = soak.dips();
  ASSERT_EQ(dips.size(), 1u);
  EXPECT_EQ(dips[0].first_interval, 25);
  EXPECT_EQ(dips[0].low_readings, 1);
  EXPECT_DOUBLE_EQ(dips[0].start_s, 27);
  EXPECT_DOUBLE_EQ(dips[0].end_s, 42);
  EXPECT_TRUE(dips[0].fails);
}

TEST(CollectivesSoak, DisabledAddsNothing) {
  CollectivesSoak soak(0, 1, SoakRule{});
  ResultRow row;
  soak.add(case_of(1024), 0, 0, 1, row, {});
  EXPECT_TRUE(row.extra.empty());
  EXPECT_TRUE(soak.dips().empty());
  EXPECT_EQ(soak.console_text({}), "");
}

}  // namespace
}  // namespace commbench
