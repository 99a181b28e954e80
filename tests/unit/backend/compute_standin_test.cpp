#include "commbench/backend/compute_standin.hpp"

#include <gtest/gtest.h>

#include <chrono>

#include "commbench/backend/host_compute.hpp"
#include "commbench/core/error.hpp"

namespace commbench {
namespace {

// Takes a fixed 3 ms longer than asked, and at least nothing: what calibration must undo.
class FixedOverheadStandIn final : public ComputeStandIn {
 public:
  std::string occupies() const override { return "nothing"; }
  double measure_uncorrected(double seconds) override { return std::max(seconds, 0.0) + 0.003; }
};

TEST(ComputeStandIn, CalibrationRemovesAFixedOverhead) {
  FixedOverheadStandIn stand_in;
  const double durations[] = {0.01, 0.05, 0.2};
  const ComputeCalibration calibration = stand_in.calibrate(durations, 3);
  EXPECT_NEAR(calibration.offset_seconds, 0.003, 1e-12);
  ASSERT_EQ(calibration.points.size(), 3u);
  EXPECT_NEAR(calibration.points[0].raw_seconds, 0.013, 1e-12);
  EXPECT_NEAR(calibration.worst_absolute_error_seconds(), 0.0, 1e-12);
  EXPECT_NEAR(stand_in.corrected_request(0.05), 0.047, 1e-12);
  EXPECT_EQ(stand_in.corrected_request(0.001), 0.0) << "never a negative request";
  EXPECT_THROW(stand_in.calibrate({}, 3), UsageError);
}

// 3 ms over the request, and every third run 10 ms more (another job took the core).
class DisturbedStandIn final : public ComputeStandIn {
 public:
  std::string occupies() const override { return "nothing"; }
  double measure_uncorrected(double seconds) override {
    return std::max(seconds, 0.0) + 0.003 + (++runs_ % 3 == 0 ? 0.01 : 0.0);
  }

 private:
  int runs_ = 0;
};

TEST(ComputeStandIn, DisturbancesDoNotEnterTheOffset) {
  DisturbedStandIn stand_in;
  const double durations[] = {0.01, 0.05};
  const ComputeCalibration calibration = stand_in.calibrate(durations, 5);
  EXPECT_NEAR(calibration.offset_seconds, 0.003, 1e-12);
  for (const CalibrationPoint& point : calibration.points) {
    EXPECT_NEAR(point.corrected_seconds, point.requested_seconds, 1e-12) << "the median run is undisturbed";
    EXPECT_NEAR(point.corrected_fastest_seconds, point.requested_seconds, 1e-12);
  }
}

TEST(ComputeStandIn, WorstErrorsAreOverPoints) {
  ComputeCalibration calibration;
  calibration.points = {{0.01, 0, 0.011, 0.0105}, {0.1, 0, 0.098, 0.098}};
  EXPECT_NEAR(calibration.worst_absolute_error_seconds(), 0.002, 1e-12);
  EXPECT_NEAR(calibration.worst_relative_error(), 0.1, 1e-9);
}

TEST(HostComputeStandIn, BusyForAtLeastTheRequestAndInOrder) {
  HostComputeStandIn stand_in;
  const auto begin = std::chrono::steady_clock::now();
  auto first = stand_in.start(0.02);
  auto second = stand_in.start(0.02);
  second->wait();
  // One compute thread: the second task ran after the first, so both had ended.
  EXPECT_TRUE(first->test());
  EXPECT_GE(std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count(), 0.04);
  EXPECT_GE(stand_in.measure_uncorrected(0.01), 0.01);
}

// The first task's end is 10 s after its start on its own clock: had going away waited for
// it, the task would test as ended.
TEST(HostComputeStandIn, GoingAwayDoesNotWaitForQueuedCompute) {
  std::unique_ptr<PendingOperation> pending;
  {
    HostComputeStandIn stand_in;
    pending = stand_in.start(10.0);
    (void)stand_in.start(10.0);
  }
  EXPECT_FALSE(pending->test()) << "a task's end is its clock's, not the thread's";
}

}  // namespace
}  // namespace commbench
