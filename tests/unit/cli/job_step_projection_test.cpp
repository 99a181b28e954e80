// --tune-against: the tuner's saving said against the job's traced step, by hand.
#include <gtest/gtest.h>

#include <string>

#include "commbench/analysis/traced_job_step.hpp"
#include "commbench/core/error.hpp"

namespace commbench {
namespace {

TrialMeasurement step(double step_seconds) {
  TrialMeasurement measured;
  measured.step_seconds = step_seconds;
  return measured;
}

// Three traced steps, alike unless a spread is given.
TracedJobStep job(double step_seconds, std::optional<double> exposed_seconds, double spread_seconds = 0) {
  TracedJobStep traced;
  traced.source = "traces/";
  traced.steps = 3;
  traced.step_seconds = step_seconds;
  traced.exposed_seconds = exposed_seconds;
  traced.step_spread_seconds = spread_seconds;
  return traced;
}

TEST(JobStepProjection, TheModelledSavingAsAShareOfTheTracedStep) {
  // The model's step falls from 300 to 250 ms; the job's step is 5 s with 2 s exposed:
  // 50 ms of 5000 ms, 1 %.
  const StepProjection p = project_onto_job(job(5.0, 2.0), step(0.300), step(0.250));
  EXPECT_NEAR(p.saved_seconds, 0.050, 1e-12);
  EXPECT_NEAR(p.share, 0.01, 1e-12);
  EXPECT_FALSE(p.capped);
  EXPECT_TRUE(p.communication_bound);
  EXPECT_EQ(projection_text(p, job(5.0, 2.0), false), "no setting saves more than 1 % of the traced 5000 ms step; "
                                                       "keep your settings");
}

TEST(JobStepProjection, NoMoreThanTheJobLeavesExposed) {
  // The model saves 1.5 s, but only 1.2 s of the job's 5 s step is exposed: 24 %.
  const TracedJobStep traced = job(5.0, 1.2);
  const StepProjection p = project_onto_job(traced, step(4.0), step(2.5));
  EXPECT_NEAR(p.saved_seconds, 1.2, 1e-12);
  EXPECT_NEAR(p.share, 0.24, 1e-12);
  EXPECT_TRUE(p.capped);
  EXPECT_EQ(projection_text(p, traced, true),
            "saves 1200 ms of the traced 5000 ms step (24 %): all the communication the job's step leaves exposed");
}

TEST(JobStepProjection, AStepWithLittleExposedCommunicationIsNotBoundByIt) {
  // 30 ms of a 1 s step exposed (3 %), and the best is slower in the model: nothing saved.
  const TracedJobStep traced = job(1.0, 0.030);
  const StepProjection p = project_onto_job(traced, step(0.200), step(0.210));
  EXPECT_EQ(p.saved_seconds, 0.0);
  EXPECT_FALSE(p.communication_bound);
  EXPECT_EQ(projection_text(p, traced, false),
            "no setting saves more than 0 % of the traced 1000 ms step: the step is not bound by its communication "
            "(30 ms of it exposed); keep your settings");
}

TEST(JobStepProjection, ASavingInsideTheStepsSpreadKeepsTheSettings) {
  // 300 ms of a 5 s step (6 %), more than 2 %, but the job's steps vary by 600 ms (12 %).
  const TracedJobStep traced = job(5.0, 2.0, 0.600);
  const StepProjection p = project_onto_job(traced, step(1.0), step(0.7));
  EXPECT_NEAR(p.share, 0.06, 1e-12);
  EXPECT_NEAR(p.needed_share, 0.12, 1e-12);
  EXPECT_TRUE(p.spread_decides);
  EXPECT_FALSE(p.worth_changing());
  EXPECT_EQ(projection_text(p, traced, false),
            "no setting saves more than 6 % of the traced 5000 ms step, inside the 600 ms its 3 traced steps vary by "
            "(12 %); keep your settings");
}

TEST(JobStepProjection, ASavingBeyondASmallSpreadIsWorthItAtTwoPercent) {
  // The steps vary by 50 ms (1 % of 5 s): the 2 % floor decides, and 150 ms (3 %) passes it.
  const TracedJobStep traced = job(5.0, 2.0, 0.050);
  const StepProjection p = project_onto_job(traced, step(1.0), step(0.85));
  EXPECT_NEAR(p.needed_share, kMinimumGain, 1e-12);
  EXPECT_FALSE(p.spread_decides);
  EXPECT_TRUE(p.worth_changing());
  EXPECT_EQ(projection_text(p, traced, true), "saves 150 ms of the traced 5000 ms step (3 %)");
}

TEST(JobStepProjection, OneTracedStepSaysItsSpreadIsUnknown) {
  TracedJobStep traced = job(5.0, 2.0);
  traced.steps = 1;
  traced.step_spread_seconds.reset();
  const StepProjection p = project_onto_job(traced, step(1.0), step(0.85));
  EXPECT_NEAR(p.needed_share, kMinimumGain, 1e-12);
  EXPECT_EQ(projection_text(p, traced, true),
            "saves 150 ms of the traced 5000 ms step (3 %) (one traced step: trace several for the step-to-step "
            "spread it must beat)");
}

TEST(JobStepProjection, TheSpreadIsTheMiddleEightyPercentOfARealJobsSteps) {
  // Real FSDP2 traces of three steps; each step's window is its longest rank's
  // ProfilerStep: 373041.863, 418880.106 and 435454.485 us. The 10th percentile lies a fifth
  // of the way from the first to the second (382209.512 us), the 90th eight tenths of the
  // way from the second to the third (432139.609 us).
  const TracedJobStep traced =
      traced_job_step(std::string(COMMBENCH_SOURCE_DIR) + "/tests/fixtures/traces/llama-fsdp2-3steps", "--tune-against");
  EXPECT_EQ(traced.steps, 3);
  EXPECT_NEAR(traced.step_seconds, (373041.863 + 418880.106 + 435454.485) / 3 * 1e-6, 1e-9);
  ASSERT_TRUE(traced.step_spread_seconds.has_value());
  EXPECT_NEAR(*traced.step_spread_seconds, (432139.6092 - 382209.5116) * 1e-6, 1e-9);
}

TEST(JobStepProjection, ThePublicTraceOfAnotherTeamsJobGivesItsSpread) {
  // Rank 3 of an 8-rank A100 all-to-all job from HolisticTraceAnalysis's test data
  // (tests/fixtures/traces/public/README.md), six steps: sorted 75473, 76212, 76727, 76940,
  // 78473 and 81120 us. The 10th percentile lies halfway from the first to the second
  // (75842.5 us), the 90th halfway from the fifth to the sixth (79796.5 us).
  const TracedJobStep traced = traced_job_step(
      std::string(COMMBENCH_SOURCE_DIR) + "/tests/fixtures/traces/public/hta-alltoall-8ranks", "--tune-against");
  EXPECT_EQ(traced.steps, 6);
  EXPECT_NEAR(traced.step_seconds, 464945.0 / 6 * 1e-6, 1e-9);
  ASSERT_TRUE(traced.step_spread_seconds.has_value());
  EXPECT_NEAR(*traced.step_spread_seconds, (79796.5 - 75842.5) * 1e-6, 1e-9);
  // A saving of 3 % of that step passes the 2 % floor but not its 5.1 % spread.
  const StepProjection p = project_onto_job(traced, step(1.0), step(1.0 - 0.03 * traced.step_seconds));
  EXPECT_TRUE(p.spread_decides);
  EXPECT_FALSE(p.worth_changing());
  // One rank's trace of eight: the step is that rank's, and the line says so.
  EXPECT_EQ(traced.ranks_traced, 1);
  EXPECT_EQ(traced.world_size, 8);
  EXPECT_NE(projection_text(p, traced, false).find("(1 of the job's 8 ranks traced: the step is the longest of those; "
                                                    "give every rank's trace)"),
            std::string::npos);
}

TEST(JobStepProjection, RanksWhoseTracesLostStepsAreNamed) {
  TracedJobStep traced = job(5.0, 2.0, 0.01);
  traced.ranks_short_of_steps = {1};
  const StepProjection p = project_onto_job(traced, step(1.0), step(0.5));
  EXPECT_EQ(projection_text(p, traced, true),
            "saves 500 ms of the traced 5000 ms step (10 %) (rank 1's trace holds fewer of the 3 steps: its time is "
            "taken per its own steps)");
  traced.ranks_short_of_steps = {1, 3};
  EXPECT_NE(projection_text(p, traced, true).find("(the traces of ranks 1, 3 hold fewer of the 3 steps: their time is "
                                                  "taken per their own steps)"),
            std::string::npos);
}

TEST(JobStepProjection, TracesWithoutStepsAreRefusedNamingTheFlag) {
  EXPECT_THROW(
      {
        try {
          traced_job_step("/nonexistent/traces", "--tune-against");
        } catch (const UsageError& e) {
          EXPECT_EQ(std::string(e.what()).rfind("--tune-against: ", 0), 0u) << e.what();
          throw;
        }
      },
      UsageError);
}

}  // namespace
}  // namespace commbench
