// The verdicts of threshold rules and baselines on measured rows, checked against bounds
// computed by hand in the comments.
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "commbench/core/error.hpp"
#include "commbench/validate/baseline.hpp"
#include "commbench/validate/threshold_check.hpp"
#include "commbench/validate/threshold_rule.hpp"
#include "usage_error.hpp"
#include "validate_test_support.hpp"

namespace commbench {
namespace {

using testing::usage_error_of;
using validate_test::csv_of;
using validate_test::row_of;

std::vector<ThresholdRule> rules_of(std::initializer_list<const char*> texts) {
  std::vector<ThresholdRule> rules;
  for (const char* text : texts) rules.push_back(parse_threshold_rule(text, "--threshold"));
  return rules;
}

// allreduce 1 MiB on 4 ranks: busbw 300, time 100 us; model 450 spec / 370.8 achievable.
ResultRow measured_row() {
  ResultRow r = row_of(Collective::allreduce, 1 << 20, 4, 300.0);
  r.time_us = 100.0;
  r.theoretical_busbw_gbps = 450.0;
  r.achievable_busbw_gbps = 370.8;
  r.efficiency = 300.0 / 450.0;
  return r;
}

Baseline baseline_with(const ResultRow& like, double busbw, double time_us) {
  ResultRow base = like;
  base.busbw_gbps = busbw;
  base.time_us = time_us;
  return parse_baseline(csv_of({base}), "--baseline b.csv");
}

TEST(ThresholdCheck, BoundsComputedByHand) {
  ResultRow row = measured_row();
  const Baseline base = baseline_with(row, 340.0, 90.0);
  const std::string subject = "allreduce 1MiB float sum out-of-place on 4 ranks: ";
  struct Case {
    const char* rule;
    std::string failure;  // empty: passes
  };
  const std::vector<Case> cases = {
      {"busbw>=300", ""},  // equal to the bound
      {"busbw>300", subject + "busbw 300 GB/s, needs > 300 GB/s; rule 'busbw>300' (--threshold)"},
      // 0.9 x 340 = 306 > 300
      {"busbw>=0.9*baseline", subject + "busbw 300 GB/s, needs >= 306 GB/s = 0.9 x baseline 340 GB/s (line 2); rule "
                                        "'busbw>=0.9*baseline' (--threshold)"},
      {"busbw>=85%*baseline", ""},  // 289
      {"time<=1.2*baseline", ""},   // 100 <= 108
      {"time<1.1*baseline", subject + "time 100 us, needs < 99 us = 1.1 x baseline 90 us (line 2); rule "
                                      "'time<1.1*baseline' (--threshold)"},
      {"busbw>=0.8*achievable", ""},  // 296.64
      // 0.7 x 450 = 315
      {"busbw>=0.7*theoretical", subject + "busbw 300 GB/s, needs >= 315 GB/s = 0.7 x theoretical 450 GB/s; rule "
                                           "'busbw>=0.7*theoretical' (--threshold)"},
      // 300 / 450 = 66.67% < 70%
      {"efficiency>=70%", subject + "efficiency 66.6667%, needs >= 70%; rule 'efficiency>=70%' (--threshold)"},
      {"efficiency>=0.6", ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.rule);
    const ThresholdCheck check(rules_of({c.rule}), std::string(c.rule).find("baseline") != std::string::npos
                                                       ? std::optional<Baseline>(base)
                                                       : std::nullopt);
    ResultRow r = row;
    const std::vector<std::string> failures = check.evaluate(r);
    ASSERT_TRUE(r.threshold_passed.has_value());
    EXPECT_EQ(*r.threshold_passed, c.failure.empty());
    EXPECT_EQ(failures, c.failure.empty() ? std::vector<std::string>{} : std::vector<std::string>{c.failure});
  }
}

TEST(ThresholdCheck, RowsNoRuleSelectsHaveNoVerdict) {
  const ThresholdCheck check(rules_of({"broadcast:busbw>=1", "@2M..:busbw>=1"}), std::nullopt);
  ResultRow row = measured_row();
  EXPECT_TRUE(check.evaluate(row).empty());
  EXPECT_FALSE(row.threshold_passed.has_value());

  // A baseline rule skips rows the baseline lacks (check_plan noted them beforehand).
  ResultRow other = row_of(Collective::allreduce, 2 << 20, 4, 1.0);
  const ThresholdCheck baseline_check(rules_of({"busbw>=baseline"}), baseline_with(row, 340.0, 90.0));
  EXPECT_TRUE(baseline_check.evaluate(other).empty());
  EXPECT_FALSE(other.threshold_passed.has_value());

  // A row without a model bound fails a model rule rather than passing unchecked.
  ResultRow unknown = row_of(Collective::allreduce, 1 << 20, 4, 300.0);
  const ThresholdCheck model_check(rules_of({"efficiency>=0.5"}), std::nullopt);
  const auto failures = model_check.evaluate(unknown);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_NE(failures[0].find("efficiency cannot be checked, the bandwidth model has no bound"), std::string::npos);
  EXPECT_FALSE(*unknown.threshold_passed);
}

TEST(ThresholdCheck, BaselineAndRulesMustMeet) {
  const Baseline base = baseline_with(measured_row(), 340.0, 90.0);
  EXPECT_EQ(usage_error_of([] { ThresholdCheck(rules_of({"busbw>=0.9*baseline"}), std::nullopt); }),
            "--threshold 'busbw>=0.9*baseline': compares with the baseline, but no --baseline was given");
  EXPECT_EQ(usage_error_of([&] { ThresholdCheck(rules_of({"busbw>=1"}), base); }),
            "--baseline b.csv: no threshold rule compares with it; add one, e.g. --threshold 'busbw>=0.9*baseline'");
}

std::vector<OpCase> plan_of(std::initializer_list<Collective> ops, std::initializer_list<std::uint64_t> sizes,
                            int ranks) {
  PlanRequest request{ops, {DataType::float32}, {ReduceOp::sum}, {Placement::out_of_place}, sizes, 0, ranks};
  return build_plan(request);
}

TEST(ThresholdCheck, PlanCheckRefusesRulesThatCannotApply) {
  const auto plan = plan_of({Collective::allreduce, Collective::broadcast}, {1024, 2048, 4096}, 4);
  EXPECT_EQ(
      usage_error_of([&] { ThresholdCheck(rules_of({"allreduce@1G..:busbw>=1"}), std::nullopt).check_plan(plan, 4); }),
      "--threshold 'allreduce@1G..:busbw>=1': selects none of this run's measurements (allreduce,broadcast "
      "from 1KiB to 4KiB)");
  EXPECT_EQ(usage_error_of([&] {
              ThresholdCheck(rules_of({"alltoall:busbw>=1"}), std::nullopt).check_plan(plan, 4);
            }).substr(0, 60),
            "--threshold 'alltoall:busbw>=1': selects none of this run's ");

  // The baseline was taken on 8 ranks: nothing to compare a 4-rank run with.
  const Baseline eight = baseline_with(row_of(Collective::allreduce, 1024, 8, 5.0), 5.0, 1.0);
  EXPECT_EQ(usage_error_of([&] { ThresholdCheck(rules_of({"busbw>=baseline"}), eight).check_plan(plan, 4); }),
            "--threshold 'busbw>=baseline': --baseline b.csv has none of the measurements it selects, e.g. "
            "allreduce 1KiB float sum out-of-place on 4 ranks (the baseline has rows for 8 ranks)");

  // Partly covered: a note says how much is not compared.
  const Baseline four = baseline_with(row_of(Collective::allreduce, 1024, 4, 5.0), 5.0, 1.0);
  const auto notes = ThresholdCheck(rules_of({"allreduce:busbw>=baseline", "busbw>=0"}), four).check_plan(plan, 4);
  EXPECT_EQ(notes,
            (std::vector<std::string>{
                "threshold 'allreduce:busbw>=baseline' (--threshold): 2 of 3 selected measurements have no row "
                "in --baseline b.csv and are not compared, e.g. allreduce 2KiB float sum out-of-place on 4 ranks"}));
}

TEST(ThresholdCheck, SizesAreTheSweepsNotTheRoundedBytes) {
  // float allgather on 24 ranks: 64 MiB rounds down to 699050 elements x 24 ranks x 4 B.
  const auto plan = plan_of({Collective::allgather}, {32u << 20, 64u << 20}, 24);
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[1].shape.bytes, 67108800u);
  const ThresholdRule rule = parse_threshold_rule("allgather@64M..:busbw>=1", "--threshold");
  EXPECT_FALSE(rule.selects(plan[0]));
  EXPECT_TRUE(rule.selects(plan[1]));
  EXPECT_TRUE(parse_threshold_rule("@64M:busbw>=1", "--threshold").selects(plan[1]));
}

TEST(ThresholdCheck, EveryNamedCollectiveMustBeInTheRun) {
  const auto plan = plan_of({Collective::allreduce}, {1024, 2048}, 4);
  EXPECT_EQ(usage_error_of(
                [&] { ThresholdCheck(rules_of({"allreduce,allgather:busbw>=1"}), std::nullopt).check_plan(plan, 4); }),
            "--threshold 'allreduce,allgather:busbw>=1': selects no allgather measurement of this run (allreduce from "
            "1KiB to 2KiB)");
  EXPECT_NO_THROW(
      ThresholdCheck(rules_of({"all:busbw>=1", "allreduce@2K:busbw>=1"}), std::nullopt).check_plan(plan, 4));
}

TEST(ThresholdCheck, ABaselineFromAnotherBackendOrLayoutIsNoted) {
  ResultRow like = row_of(Collective::allreduce, 1024, 4, 5.0);
  like.backend = "nccl";
  like.nodes = 2;
  const Baseline base = parse_baseline(csv_of({like}), "--baseline b.csv");
  const auto plan = plan_of({Collective::allreduce}, {1024}, 4);
  const ThresholdCheck check(rules_of({"busbw>=baseline"}), base);
  EXPECT_EQ(
      check.check_plan(plan, 4, "mpi", 1),
      (std::vector<std::string>{"--baseline b.csv line 2 was measured with the nccl backend on 2 node(s); this run "
                                "uses mpi on 1: the comparison is not like with like"}));
  EXPECT_TRUE(check.check_plan(plan, 4, "nccl", 2).empty());
}

TEST(ThresholdCheck, ModelCheckAsksForTheRightBound) {
  const auto plan = plan_of({Collective::allreduce, Collective::broadcast}, {1024}, 4);
  std::vector<std::pair<Collective, Reference>> asked;
  const MissingBound missing = [&](Collective op, Reference reference) -> std::optional<std::string> {
    asked.emplace_back(op, reference);
    if (op == Collective::broadcast) return "no NIC found";
    return std::nullopt;
  };
  EXPECT_NO_THROW(
      ThresholdCheck(rules_of({"allreduce:efficiency>=0.5", "allreduce:busbw>=achievable", "busbw>=1"}), std::nullopt)
          .check_model(plan, missing));
  EXPECT_EQ(asked, (std::vector<std::pair<Collective, Reference>>{{Collective::allreduce, Reference::theoretical},
                                                                  {Collective::allreduce, Reference::achievable}}));
  EXPECT_EQ(usage_error_of(
                [&] { ThresholdCheck(rules_of({"busbw>=0.5*theoretical"}), std::nullopt).check_model(plan, missing); }),
            "--threshold 'busbw>=0.5*theoretical': the bandwidth model has no theoretical busbw for broadcast here (no "
            "NIC found); judge it by a figure (busbw>=20) or a good run (busbw>=0.9*baseline, --baseline)");
}

}  // namespace
}  // namespace commbench
