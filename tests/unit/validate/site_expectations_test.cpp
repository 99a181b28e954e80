#include <gtest/gtest.h>

#include "commbench/validate/simulated_cluster.hpp"
#include "commbench/validate/site_expectations.hpp"
#include "commbench/validate/validation_report.hpp"
#include "usage_error.hpp"

namespace commbench {
namespace {

using testing::usage_error_of;

TEST(SiteExpectations, ReadsFiguresAndFactsWithComments) {
  const SiteExpectations site = parse_site_expectations(
      "# 8x H100\npair_gbps = 45   # per direction\n\n intra_busbw_gbps=360\nGPU count = 8\nGPU 0 PCIe link = Gen5 "
      "x16\n",
      "site");
  EXPECT_EQ(site.pair_gbps, 45);
  EXPECT_EQ(site.intra_busbw_gbps, 360);
  EXPECT_FALSE(site.group_busbw_gbps);
  ASSERT_EQ(site.facts.size(), 2u);
  EXPECT_EQ(site.facts[1].key, "GPU 0 PCIe link");
  EXPECT_EQ(site.facts[1].value, "Gen5 x16");
}

TEST(SiteExpectations, EachBadLineIsNamed) {
  EXPECT_EQ(usage_error_of([] { parse_site_expectations("gpus 8\n", "--expect s"); }),
            "--expect s:1: expected KEY = VALUE, got 'gpus 8'");
  EXPECT_EQ(usage_error_of([] { parse_site_expectations("# x\npair_gbps = fast\n", "--expect s"); }),
            "--expect s:2: pair_gbps: 'fast' is not a positive GB/s figure");
  EXPECT_EQ(usage_error_of([] { parse_site_expectations("pair_gbps = -3\n", "--expect s"); }),
            "--expect s:1: pair_gbps: '-3' is not a positive GB/s figure");
  EXPECT_EQ(usage_error_of([] { parse_site_expectations("GPU count = 8\nGPU count = 4\n", "--expect s"); }),
            "--expect s:2: 'GPU count' is given twice");
  // A key that is neither a figure nor a node fact is a typo, not a fact no node has.
  for (const char* typo : {"pair_gbs = 400\n", "gpus = 8\n", "GPU 0 pcie = Gen5 x16\n", "GPU x model = H100\n"})
    EXPECT_NE(usage_error_of([&] { parse_site_expectations(typo, "--expect s"); })
                  .find("--expect s:1: '" + std::string(typo).substr(0, std::string(typo).find(" =")) +
                        "' is neither a figure (pair_gbps, intra_busbw_gbps, group_busbw_gbps) nor a node fact"),
              std::string::npos)
        << typo;
  for (const char* fact : {"GPU 3 NVLinks = 18\n", "RDMA NIC count = 8\n", "mlx5_0 port 1 = ACTIVE 400 Gb/s\n"})
    EXPECT_EQ(parse_site_expectations(fact, "s").facts.size(), 1u) << fact;
  EXPECT_EQ(usage_error_of([] { parse_site_expectations(" = 8\n", "--expect s"); }),
            "--expect s:1: expected KEY = VALUE, got '= 8'");
}

TEST(SiteExpectations, UnmetFactsSayWhatAndWhatWasExpected) {
  const std::vector<NamedValue> node{{"gpus", "4"}, {"gpu 0 pcie", "Gen5 x16"}};
  const std::vector<NamedValue> expected{{"gpus", "8"}, {"gpu 0 pcie", "Gen5 x16"}, {"nic mlx5_0", "ACTIVE 400 Gb/s"}};
  EXPECT_EQ(unmet_facts(node, expected),
            (std::vector<std::string>{"gpus is 4, expected 8", "nic mlx5_0 is absent, expected ACTIVE 400 Gb/s"}));
}

ValidationOutcome simulated(const std::string& degrade, double time_limit = 0) {
  SimulationModel model;
  model.nodes = 16;
  SimulatedCluster cluster(
      model, degrade.empty() ? std::vector<Degradation>{} : parse_degradations(degrade, 16, 0.25, "--degrade"));
  PlanSettings settings;
  settings.time_limit_seconds = time_limit;
  return run_validation_plan(cluster, settings);
}

TEST(ValidationReport, ExitCodesAndTheExcludeLine) {
  const ValidationOutcome healthy = simulated("");
  EXPECT_EQ(validation_exit_code(healthy), 0);
  EXPECT_EQ(exclude_option(healthy), "");
  const ValidationOutcome faulty = simulated("node:3,node:7,node:8");
  EXPECT_EQ(validation_exit_code(faulty), 1);
  EXPECT_EQ(exclude_option(faulty), "--exclude=node[03,07-08]");
  const ValidationOutcome cut = simulated("", 5.5);
  EXPECT_EQ(validation_exit_code(cut), 4);
  // Wrong data a --check found fails the run even when every figure was fine.
  ValidationOutcome wrong = simulated("");
  wrong.wrong = 12;
  EXPECT_EQ(validation_exit_code(wrong), 1);
  PlanSettings settings;
  const std::string text = validation_summary(wrong, settings);
  EXPECT_NE(text.find("FAIL check: 12 bytes or elements received wrong\n"), std::string::npos) << text;
  EXPECT_NE(text.find("verdict: FAILED: 0 nodes, 0 links, 0 groups, wrong data received\n"), std::string::npos) << text;
  EXPECT_EQ(validation_json(wrong, settings)["exit_code"], 1);
}

TEST(ValidationReport, TheSummaryEndsWithTheVerdictAndTheExcludeList) {
  PlanSettings settings;
  const std::string text = validation_summary(simulated("node:3,node:7,node:8"), settings);
  EXPECT_NE(text.find("plan: 16 nodes, 5 rounds (3 first, 2 re-test), 0 bisection steps, "), std::string::npos) << text;
  EXPECT_NE(text.find("FAIL node node07: slow with "), std::string::npos) << text;
  EXPECT_NE(text.find("  node00           ok\n"), std::string::npos) << text;
  EXPECT_NE(text.find("nodes: 13 ok, 3 in a fault (node, link or group)\n"), std::string::npos) << text;
  const std::string tail = "verdict: FAILED: 3 nodes, 0 links, 0 groups\n--exclude=node[03,07-08]\n";
  EXPECT_EQ(text.substr(text.size() - tail.size()), tail);
}

TEST(ValidationReport, TheCsvHasOneRowPerCheck) {
  const ValidationOutcome outcome = simulated("link:2-9");
  const std::string csv = validation_csv(outcome);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "kind,phase,round,node_a,node_b,nodes,measured_gbps,expected_gbps,result,reason");
  std::size_t node_rows = 0, pair_rows = 0, intra_rows = 0;
  for (std::size_t at = csv.find('\n') + 1; at < csv.size(); at = csv.find('\n', at) + 1) {
    node_rows += csv.compare(at, 5, "node,") == 0;
    pair_rows += csv.compare(at, 5, "pair,") == 0;
    intra_rows += csv.compare(at, 6, "intra,") == 0;
  }
  EXPECT_EQ(node_rows, 16u);
  EXPECT_EQ(intra_rows, 16u);
  EXPECT_EQ(pair_rows, outcome.pairs.size());
  EXPECT_NE(csv.find("node,verdict,,node02,,,,,fail,link to node09 is slow\n"), std::string::npos) << csv;
}

}  // namespace
}  // namespace commbench
