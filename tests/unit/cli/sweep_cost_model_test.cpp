// The --from cost model on a hand-written sweep: log-log interpolation between sizes,
// the floor and the bandwidth beyond them, conversion to other rank counts through
// busbw, and the errors naming what is missing.
#include "commbench/analysis/sweep_cost_model.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "usage_error.hpp"

namespace commbench {
namespace {

// allreduce over 4 ranks on 1 node: 10 us at 1 KiB, 80 us at 4 KiB (busbw = bytes / time
// x 2(n-1)/n = 1.5 x algbw).
constexpr const char* kSweep =
    "op,bytes,ranks,nodes,dtype,time_us,busbw_gbps\n"
    "allreduce,1024,4,1,float32,10,0.1536\n"
    "allreduce,4096,4,1,float32,80,0.0768\n";

CommunicationCostQuery allreduce(std::uint64_t bytes, int ranks = 4, int nodes = 1) {
  return {StepKind::collective, Collective::allreduce, bytes, ranks, nodes};
}

TEST(SweepCostModel, InterpolatesTimeInLogLogBetweenSizes) {
  const SweepCostModel model(kSweep, "--from sweep.csv");
  EXPECT_NEAR(model.seconds(allreduce(1024)), 10e-6, 1e-12);
  // Halfway in log size: the geometric mean of the times, not the arithmetic one (45 us).
  EXPECT_NEAR(model.seconds(allreduce(2048)), std::sqrt(10e-6 * 80e-6), 1e-12);
  EXPECT_TRUE(model.notes().empty());
}

TEST(SweepCostModel, BeyondTheSweepTheFloorAndTheBandwidthHoldAndAreNoted) {
  const SweepCostModel model(kSweep, "--from sweep.csv");
  EXPECT_NEAR(model.seconds(allreduce(256)), 10e-6, 1e-12);
  EXPECT_NEAR(model.seconds(allreduce(8192)), 160e-6, 1e-12);
  ASSERT_EQ(model.notes().size(), 2u);
  EXPECT_NE(model.notes()[0].find("extrapolated"), std::string::npos);
}

TEST(SweepCostModel, OtherRankCountsConvertThroughBusBandwidth) {
  const SweepCostModel model(kSweep, "--from sweep.csv");
  // 8 ranks: busbw 0.0768 GB/s at 4 KiB, factor 2 x 7 / 8 = 1.75: 4096 x 1.75 / 0.0768e9.
  EXPECT_NEAR(model.seconds(allreduce(4096, 8)), 4096 * 1.75 / 0.0768e9, 1e-12);
  ASSERT_EQ(model.notes().size(), 1u);
  EXPECT_EQ(model.notes()[0],
            "--from sweep.csv allreduce over 8 ranks on 1 node: converted through busbw from the sweep's 4 ranks on 1 "
            "node (extrapolated)");
}

TEST(SweepCostModel, BelowTheSweepAnotherGroupTakesTheSmallestSizesTimeNotItsBandwidth) {
  const SweepCostModel model(kSweep, "--fabric sweep.csv");
  // 8 B over 8 ranks: latency-bound; at the 1 KiB point's busbw it would take 91 ns.
  EXPECT_NEAR(model.seconds(allreduce(8, 8)), 10e-6, 1e-12);
  ASSERT_EQ(model.notes().size(), 2u);
  const std::vector<std::string> notes = model.notes();
  EXPECT_EQ(std::count_if(notes.begin(), notes.end(),
                          [](const std::string& note) {
                            return note.find("sizes below the sweep's smallest (1024 B) take its time") !=
                                   std::string::npos;
                          }),
            1);
}

TEST(SweepCostModel, AnOpTheSweepLacksIsAUsageErrorNamingIt) {
  const SweepCostModel model(kSweep, "--from sweep.csv");
  EXPECT_EQ(testing::usage_error_of([&] {
              model.seconds({StepKind::collective, Collective::allgather, 1024, 4, 1});
            }),
            "--from sweep.csv: the sweep has no allgather over 2 or more ranks, which the step issues (measured: "
            "allreduce; run bench-collectives --op allgather)");
}

// One rank's busbw is empty (nothing crosses a link): the file still reads; a row of two
// ranks without one is malformed.
TEST(SweepCostModel, AOneRankRowsEmptyBusbwReads) {
  const std::string header = "op,bytes,ranks,nodes,time_us,busbw_gbps\n";
  EXPECT_EQ(testing::usage_error_of([&] { SweepCostModel(header + "allreduce,1024,1,1,10,\n", "a.csv"); }),
            "(accepted)");
  EXPECT_EQ(testing::usage_error_of([&] { SweepCostModel(header + "allreduce,1024,2,1,10,\n", "a.csv"); }),
            "a.csv line 2: busbw_gbps '' is not a non-negative number");
}

TEST(SweepCostModel, AFileWithoutTheColumnsIsAUsageErrorNamingTheColumn) {
  EXPECT_EQ(testing::usage_error_of([] { SweepCostModel("op,bytes,ranks,nodes,busbw_gbps\n", "--from a.csv"); }),
            "--from a.csv: no 'time_us' column (a bench-collectives --csv file has op, bytes, ranks, nodes, time_us, "
            "busbw_gbps)");
  EXPECT_EQ(testing::usage_error_of([] {
              SweepCostModel("op,bytes,ranks,nodes,time_us,busbw_gbps\nallreduce,1024,4,1,fast,1\n", "--from a.csv");
            }),
            "--from a.csv line 2: time_us 'fast' is not a non-negative number");
}

// The same sweep as bench-collectives --json writes it: `rows` with the CSV's fields.
constexpr const char* kSweepJson = R"({"schema": "commbench.collectives/1", "rows": [
    {"op": "allreduce", "bytes": 1024, "ranks": 4, "nodes": 1, "time_us": 10, "busbw_gbps": 0.1536},
    {"op": "allreduce", "bytes": 4096, "ranks": 4, "nodes": 1, "time_us": 80, "busbw_gbps": 0.0768}]})";

TEST(SweepCostModel, AJsonResultGivesTheSameModelAsItsCsv) {
  const SweepCostModel csv(kSweep, "--fabric sweep.csv");
  const SweepCostModel json(kSweepJson, "--fabric sweep.json");
  for (const std::uint64_t bytes : {256ull, 1024ull, 2048ull, 8192ull})
    EXPECT_DOUBLE_EQ(json.seconds(allreduce(bytes)), csv.seconds(allreduce(bytes))) << bytes;
  EXPECT_DOUBLE_EQ(json.seconds(allreduce(2048, 8)), csv.seconds(allreduce(2048, 8)));
}

TEST(SweepCostModel, AJsonFileWithoutRowsOrFieldsIsAUsageErrorNamingWhat) {
  const auto error = [](const char* text) {
    return testing::usage_error_of([&] { SweepCostModel(text, "--fabric s.json"); });
  };
  EXPECT_EQ(error("{\"rows\": [1"), "--fabric s.json: not valid JSON");
  EXPECT_EQ(error("{\"nodes\": []}"), "--fabric s.json: no 'rows' array (a bench-collectives --json file has one)");
  EXPECT_EQ(error("{\"rows\": [{\"op\": \"allreduce\", \"bytes\": 8}]}"),
            "--fabric s.json: rows[0] has no 'ranks' (a bench-collectives row has op, bytes, ranks, nodes, time_us, "
            "busbw_gbps)");
  EXPECT_EQ(error(R"({"rows": [{"op": "allreduce", "bytes": 8, "ranks": 2, "nodes": 1, "time_us": 3,
                               "busbw_gbps": null}]})"),
            "--fabric s.json: rows[0] busbw_gbps null is not a non-negative number");
  EXPECT_EQ(error(R"({"rows": [{"op": "gather", "bytes": 8, "ranks": 2, "nodes": 1, "time_us": 3,
                               "busbw_gbps": 1}]})")
                .rfind("--fabric s.json: rows[0] op", 0),
            0u);
  EXPECT_EQ(error(R"({"rows": [{"op": "allreduce", "bytes": 1e300, "ranks": 2, "nodes": 1, "time_us": 3,
                               "busbw_gbps": 1}]})"),
            "--fabric s.json: rows[0] bytes 1e+300 is more than 1152921504606846976");
  EXPECT_EQ(testing::usage_error_of([] {
              SweepCostModel("op,bytes,ranks,nodes,time_us,busbw_gbps\nallreduce,8,3e9,1,3,1\n", "--from a.csv");
            }),
            "--from a.csv line 2: ranks 3000000000 is more than 16777216");
  EXPECT_EQ(error("{\"rows\": []}"), "--fabric s.json: no measurements (its rows are empty)");
}

}  // namespace
}  // namespace commbench
