// Nsight Systems reports: PyTorch's NVTX range names taken apart, the step ranges, and a
// real report of one rank (tests/fixtures/nsys, recorded by record-nsys.sh) read as the
// calls that rank made.
#include <gtest/gtest.h>

#include <string>

#include "commbench/replay/nsys_report_reader.hpp"
#include "usage_error.hpp"

namespace commbench {
namespace {

using testing::usage_error_of;

const std::string kStraggler = std::string(COMMBENCH_SOURCE_DIR) + "/tests/fixtures/nsys/nsys-straggler/";

TEST(PytorchNvtxRange, NameAndShapesOfARecordedOperator) {
  // As emit_nvtx(record_shapes=True) names a range, from the straggler fixture.
  const PytorchNvtxRange range = parse_pytorch_nvtx_range(
      "c10d::allreduce_, op_id = 156, sizes = [[1049600], [], [], [], [], []], input_op_ids = [(0,-1), (0,-1), "
      "(0,-1), (0,-1), (0,-1), (0,-1)]");
  EXPECT_EQ(range.name, "c10d::allreduce_");
  EXPECT_EQ(range.sizes, "[[1049600], [], [], [], [], []]");
  const PytorchNvtxRange with_seq = parse_pytorch_nvtx_range(
      "c10d::_allgather_base_, seq = 0, op_id = 9, sizes = [[2000], [1000], [], [], []], input_op_ids = [(8,0)]");
  EXPECT_EQ(with_seq.name, "c10d::_allgather_base_");
  EXPECT_EQ(with_seq.sizes, "[[2000], [1000], [], [], []]");
}

TEST(PytorchNvtxRange, WithoutShapesOrCutShortItHasNone) {
  EXPECT_EQ(parse_pytorch_nvtx_range("c10d::barrier, op_id = 4").sizes, "");
  EXPECT_EQ(parse_pytorch_nvtx_range("c10d::barrier, op_id = 4").name, "c10d::barrier");
  EXPECT_EQ(parse_pytorch_nvtx_range("c10d::allreduce_, sizes = [[10], [").sizes, "");
  EXPECT_EQ(parse_pytorch_nvtx_range("my range").name, "my range");
}

TEST(NvtxStep, TheNamesAStepRangeGoesBy) {
  EXPECT_EQ(nvtx_step_number("ProfilerStep#12"), 12);
  EXPECT_EQ(nvtx_step_number("step 1"), 1);
  EXPECT_EQ(nvtx_step_number("Step#3"), 3);
  EXPECT_EQ(nvtx_step_number("iteration 40"), 40);
  EXPECT_EQ(nvtx_step_number("step 1 forward"), std::nullopt);
  EXPECT_EQ(nvtx_step_number("steps 2"), std::nullopt);
  EXPECT_EQ(nvtx_step_number("aten::step"), std::nullopt);
}

TEST(NsysReport, KnowsItsFilesByName) {
  EXPECT_TRUE(is_nsys_report_name("rank0.sqlite"));
  EXPECT_TRUE(is_nsys_report_name("rank0.sqlite.gz"));
  EXPECT_TRUE(is_nsys_report_name("report.3.nsys-rep"));
  EXPECT_TRUE(is_nsys_report_name("old.qdrep"));
  EXPECT_FALSE(is_nsys_report_name("rank0.json.gz"));
}

TEST(NsysReport, ARanksReportIsItsCallsSizesAndStep) {
  const NsysReport report = read_nsys_report(kStraggler + "rank2.sqlite.gz", "float32");
  ASSERT_EQ(report.processes.size(), 1u);
  const RankTrace& trace = report.processes.front().trace;
  EXPECT_GT(report.processes.front().pid, 0);
  EXPECT_EQ(trace.rank, -1);  // a report does not say it
  EXPECT_FALSE(trace.host.empty());
  ASSERT_EQ(trace.steps.size(), 1u);
  EXPECT_EQ(trace.steps.front().number, 1);
  // DDP's two buckets of the 8-layer stack, as the ranges name them (fp32).
  ASSERT_EQ(trace.collectives.size(), 2u);
  EXPECT_EQ(trace.collectives[0].op, "allreduce");
  EXPECT_EQ(trace.collectives[0].bytes, 1049600u * 4);
  EXPECT_EQ(trace.collectives[1].bytes, 7347200u * 4);
  for (const TracedCollective& call : trace.collectives) {
    EXPECT_EQ(call.dtype, "float32");
    EXPECT_EQ(call.step, 1);
    EXPECT_GT(call.end_us, call.start_us);
    // On the UTC clock: after 2020, so that reports of several ranks line up.
    EXPECT_GT(call.start_us, 1.6e15);
  }
  EXPECT_TRUE(report.notes.empty());
  const NsysReport halves = read_nsys_report(kStraggler + "rank2.sqlite.gz", "bfloat16");
  EXPECT_EQ(halves.processes.front().trace.collectives[1].bytes, 7347200u * 2);
}

TEST(NsysReport, WhatIsNoReportIsOneLineNamingTheFile) {
  EXPECT_EQ(usage_error_of([] { read_nsys_report("/nonexistent/rank0.sqlite", "float32"); }),
            "/nonexistent/rank0.sqlite: cannot read (No such file or directory)");
  const std::string readme = std::string(COMMBENCH_SOURCE_DIR) + "/tests/fixtures/nsys/README.md";
  EXPECT_EQ(usage_error_of([&] { read_nsys_report(readme, "float32"); }),
            readme + ": not an SQLite database (`nsys export --type sqlite` writes one)");
  EXPECT_EQ(usage_error_of([] { read_nsys_report(kStraggler + "rank0.sqlite.gz", "float7"); }),
            "--dtype: 'float7' is no element type PyTorch has");
}

}  // namespace
}  // namespace commbench
