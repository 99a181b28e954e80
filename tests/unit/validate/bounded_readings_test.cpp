// Bounded validation: a node at a thousandth of its rate is named after readings cut at
// their budget, and the plan's modelled time is what the budgets allow, not what the
// slow node would need to move everything.
#include <gtest/gtest.h>

#include <string>

#include "commbench/validate/simulated_cluster.hpp"
#include "commbench/validate/validation_plan.hpp"
#include "commbench/validate/validation_report.hpp"

namespace commbench {
namespace {

// 4 nodes, no noise, node 2 at 0.001 of 50 GB/s: 0.05 GB/s. The model's readings move
// 12 iterations of 64 MiB (67108864 B).
struct SlowNodeCluster {
  SlowNodeCluster() : cluster(model(), parse_degradations("node:2@0.001", 4, 0.25, "--degrade")) {}
  static SimulationModel model() {
    SimulationModel model;
    model.nodes = 4;
    model.noise = 0;
    return model;
  }
  SimulatedCluster cluster;
};

TEST(BoundedReadings, ASlowNodeIsNamedFromReadingsCutShortAtTheirBudget) {
  SlowNodeCluster slow;
  PlanSettings settings;
  const ValidationOutcome outcome = run_validation_plan(slow.cluster, settings);
  ASSERT_EQ(outcome.faults.size(), 1u);
  EXPECT_EQ(outcome.faults[0].kind, FaultKind::node);
  EXPECT_EQ(outcome.faults[0].nodes, std::vector<int>{2});
  // Its 3 first readings and the 3 measured again, every one cut short.
  EXPECT_NE(outcome.faults[0].reason.find("slow with 3 of 3 partners: median 0.05 GB/s"), std::string::npos)
      << outcome.faults[0].reason;
  EXPECT_NE(outcome.faults[0].reason.find("; 6 of 6 readings cut short at their time budget"), std::string::npos)
      << outcome.faults[0].reason;
  int cut = 0;
  for (const PairResult& pair : outcome.pairs) {
    const bool with_slow_node = pair.first == 2 || pair.second == 2;
    EXPECT_EQ(pair.cut_short, with_slow_node) << pair.first << "-" << pair.second << " " << pair.phase;
    EXPECT_EQ(pair.slow, with_slow_node);
    cut += pair.cut_short ? 1 : 0;
  }
  EXPECT_EQ(cut, 6);
  // Modelled seconds: local checks 5; the intra-node collectives 0.2 + 12 x 64 MiB x 2 /
  // 370 GB/s; 6 pair rounds of 0.2 + one iteration of the slow pair, 64 MiB / 0.05 GB/s =
  // 1.34217728 s (its budget is the 1 s floor: 3 x 12 x 64 MiB / 50 GB/s = 0.048 s, and the
  // iteration that spends it ends first); the collective over the 3 others 1 + 0.003 +
  // 12 x 64 MiB x 2 x 2/3 / 46 GB/s. Unbounded, each slow round took 0.2 + 16.1 s.
  const double bytes = 12.0 * 67108864;
  const double expected = 5 + (0.2 + bytes * 2 / 370e9) + 6 * (0.2 + 1.34217728) + (1.003 + bytes * 2 * 2 / 3 / 46e9);
  EXPECT_NEAR(outcome.elapsed_seconds, expected, 1e-9);
}

TEST(BoundedReadings, CutShortReadingsSayItInTheirRows) {
  SlowNodeCluster slow;
  const ValidationOutcome outcome = run_validation_plan(slow.cluster, PlanSettings{});
  const nlohmann::ordered_json doc = validation_json(outcome, PlanSettings{});
  int cut_rows = 0;
  for (const Record& record : validation_records(outcome)) {
    const std::string reason = std::get<std::string>(record.values.back());
    if (reason == "cut short at its time budget: scored from what it moved") ++cut_rows;
  }
  EXPECT_EQ(cut_rows, 6);
  int cut_json = 0;
  for (const auto& pair : doc["pairs"]) cut_json += pair["cut_short"].get<bool>() ? 1 : 0;
  EXPECT_EQ(cut_json, 6);
  EXPECT_EQ(doc["exit_code"], 1);
}

TEST(BoundedReadings, APlanStatesItsBoundAsItStarts) {
  PlanSettings settings;
  settings.time_limit_seconds = 600;
  EXPECT_EQ(validation_plan_text(settings, 4),
            "plan: 4 nodes, 3 pair rounds, then re-tests and the collective over the nodes; a reading stops at 3x "
            "the time its expected rate needs (at least 1 s) and fails, cut short; at most 600 s (--time-limit) and "
            "the reading under way");
  settings.group_collectives = false;
  settings.time_limit_seconds = 0;
  EXPECT_EQ(validation_plan_text(settings, 2),
            "plan: 2 nodes, 1 pair round, then re-tests; a reading stops at 3x the time its expected rate needs (at "
            "least 1 s) and fails, cut short; no time limit (--time-limit 0)");
}

}  // namespace
}  // namespace commbench
