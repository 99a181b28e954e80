// An older generation's NCCL trace (PyTorch 1.13 to 2.0, NCCL 2.12 to 2.18), laid out as
// the public traces of tests/fixtures/traces/public are: calls marked by a c10d:: operator
// with a `nccl:*` range nested in it, record_param_comms without the call's name, every
// kernel named ncclKernel_SendRecv_..., and each kernel linked to its CPU launch by its
// correlation id (the profiler wrote that id as the kernel's External id too).
#include <gtest/gtest.h>

#include <string>

#include "commbench/replay/pytorch_trace_reader.hpp"
#include "commbench/replay/trace_summary.hpp"
#include "temp_dir.hpp"

namespace commbench {
namespace {

using testing::TempDir;

// Rank 0 of 16, thread 7 calls; the GPU is pid 0.
const char* kOlderTrace = R"json({
 "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 16},
 "traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#5", "pid": 1, "tid": 7, "ts": 0.0, "dur": 10000.0},
  {"ph": "X", "cat": "cpu_op", "name": "c10d::allreduce_", "pid": 1, "tid": 7, "ts": 100.0, "dur": 50.0,
   "args": {"External id": 10, "Input Dims": [[], [], [], []], "Input type": ["TensorList", "", "", "Scalar"]}},
  {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 7, "ts": 102.0, "dur": 46.0,
   "args": {"External id": 11, "Input Dims": [[], []], "Input type": ["Scalar", "Scalar"]}},
  {"ph": "X", "cat": "user_annotation", "name": "nccl:all_reduce", "pid": 1, "tid": 7, "ts": 105.0, "dur": 40.0,
   "args": {"External id": 12, "Input Dims": [[1000]], "Input type": ["float"]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 7, "ts": 120.0, "dur": 5.0,
   "args": {"External id": 500, "correlation": 500}},
  {"ph": "X", "cat": "cpu_op", "name": "c10d::_allgather_base_", "pid": 1, "tid": 7, "ts": 200.0, "dur": 50.0,
   "args": {"External id": 20, "Input Dims": [[8000], [1000], []], "Input type": ["float", "float", ""]}},
  {"ph": "X", "cat": "user_annotation", "name": "nccl:_all_gather_base", "pid": 1, "tid": 7, "ts": 205.0,
   "dur": 40.0, "args": {"External id": 21, "Input Dims": [[1000]], "Input type": ["float"]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 7, "ts": 220.0, "dur": 5.0,
   "args": {"External id": 501, "correlation": 501}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 7, "ts": 230.0, "dur": 5.0,
   "args": {"External id": 502, "correlation": 502}},
  {"ph": "X", "cat": "user_annotation", "name": "nccl:all_to_all", "pid": 1, "tid": 7, "ts": 300.0, "dur": 40.0,
   "args": {"External id": 30, "Input Dims": [[0]], "Input type": ["float"]}},
  {"ph": "X", "cat": "kernel", "name": "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)",
   "pid": 0, "tid": 9, "ts": 1000.0, "dur": 400.0, "args": {"External id": 500, "correlation": 500}},
  {"ph": "X", "cat": "kernel", "name": "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)",
   "pid": 0, "tid": 9, "ts": 2000.0, "dur": 100.0, "args": {"External id": 501, "correlation": 501}},
  {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)",
   "pid": 0, "tid": 9, "ts": 2050.0, "dur": 100.0, "args": {"External id": 502, "correlation": 502}},
  {"ph": "X", "cat": "kernel", "name": "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)",
   "pid": 0, "tid": 9, "ts": 3000.0, "dur": 250.0, "args": {"External id": 11, "correlation": 11}},
  {"ph": "X", "cat": "kernel", "name": "sm80_xmma_gemm_f32f32", "pid": 0, "tid": 8, "ts": 1100.0, "dur": 100.0,
   "args": {"correlation": 600}}
 ]})json";

class OlderNcclTrace : public ::testing::Test {
 protected:
  TempDir dir;
  RankTrace trace = read_pytorch_trace(dir.write("rank0.json", kOlderTrace));
};

TEST_F(OlderNcclTrace, NestedMarkersAreOneCall) {
  ASSERT_EQ(trace.collectives.size(), 3u);
  EXPECT_EQ(trace.collectives[0].op, "allreduce");
  EXPECT_EQ(trace.collectives[0].name, "c10d::allreduce_");
  EXPECT_EQ(trace.collectives[1].op, "allgather");
  EXPECT_EQ(trace.collectives[2].op, "alltoall");
  EXPECT_EQ(trace.collectives[2].name, "nccl:all_to_all");  // marked by NCCL's range alone
  EXPECT_EQ(trace.collectives[0].step, 5);
}

TEST_F(OlderNcclTrace, KernelsFollowTheirLaunchNotTheirName) {
  EXPECT_EQ(trace.pairing, "launch");
  const TracedCollective& allreduce = trace.collectives[0];
  ASSERT_TRUE(allreduce.timed_by_backend);
  EXPECT_DOUBLE_EQ(allreduce.start_us, 1000.0);
  EXPECT_DOUBLE_EQ(allreduce.run_us, 400.0);
  // A SendRecv kernel ran it: its name says nothing of the all-reduce's algorithm.
  EXPECT_EQ(allreduce.nccl_algo, "");
  EXPECT_EQ(allreduce.nccl_proto, "");
  // Two kernels, 2000-2100 and 2050-2150: busy for their union, 150 us.
  const TracedCollective& allgather = trace.collectives[1];
  EXPECT_DOUBLE_EQ(allgather.start_us, 2000.0);
  EXPECT_DOUBLE_EQ(allgather.end_us, 2150.0);
  EXPECT_DOUBLE_EQ(allgather.run_us, 150.0);
  // Its own kernel names the algorithm; before NCCL 2.19 the name's protocol is no reading.
  EXPECT_EQ(allgather.nccl_algo, "RING");
  EXPECT_EQ(allgather.nccl_proto, "");
  // A call of no bytes launches no kernel: it borrows none.
  EXPECT_FALSE(trace.collectives[2].timed_by_backend);
}

TEST_F(OlderNcclTrace, AKernelNoCallLaunchedIsReportedNotDropped) {
  // Its External id is its correlation id again, not record_param_comms' 11.
  EXPECT_EQ(trace.unclaimed_runs, 1u);
  EXPECT_DOUBLE_EQ(trace.unclaimed_seconds, 250e-6);
  // The rank's communication: every NCCL kernel, once: 400 + 150 + 250 us.
  TraceSummary summary = summarize_traces({trace});
  ASSERT_TRUE(summary.ranks[0].communication_seconds);
  EXPECT_NEAR(*summary.ranks[0].communication_seconds, 800e-6, 1e-12);
  ASSERT_TRUE(summary.ranks[0].calls_seconds);
  EXPECT_NEAR(*summary.ranks[0].calls_seconds, 550e-6, 1e-12);
  EXPECT_EQ(summary.ranks[0].unclaimed_runs, 1u);
  ASSERT_TRUE(summary.ranks[0].exposed_seconds);
  EXPECT_LE(*summary.ranks[0].exposed_seconds, *summary.ranks[0].communication_seconds);
  ASSERT_EQ(summary.steps.size(), 1u);
  ASSERT_TRUE(summary.steps[0].communication_seconds);
  EXPECT_NEAR(*summary.steps[0].communication_seconds, 800e-6, 1e-12);
}

TEST_F(OlderNcclTrace, SizesAndGroupsAsFarAsTheTraceSaysThem) {
  // The operator's TensorList has no shape: NCCL's range holds the tensor.
  const TracedCollective& allreduce = trace.collectives[0];
  EXPECT_TRUE(allreduce.bytes_known);
  EXPECT_EQ(allreduce.bytes, 4000u);
  EXPECT_EQ(allreduce.group_ranks, 0);  // nothing says which group
  // The gathered output is 8 times the input: a group of 8.
  const TracedCollective& allgather = trace.collectives[1];
  EXPECT_EQ(allgather.group_ranks, 8);
  EXPECT_EQ(allgather.bytes, 32000u);
  const TracedCollective& alltoall = trace.collectives[2];
  EXPECT_TRUE(alltoall.bytes_known);
  EXPECT_EQ(alltoall.bytes, 0u);
}

TEST(UnsizedTrace, ACallWithNoShapeHasNoSizeRatherThanZero) {
  TempDir dir;
  const RankTrace trace = read_pytorch_trace(dir.write("rank1.json", R"json({
 "distributedInfo": {"backend": "nccl", "rank": 1, "world_size": 2},
 "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "c10d::allreduce_", "pid": 1, "tid": 7, "ts": 100.0, "dur": 50.0, "args": {}},
  {"ph": "X", "cat": "user_annotation", "name": "nccl:all_reduce", "pid": 1, "tid": 7, "ts": 105.0, "dur": 40.0}
 ]})json"));
  ASSERT_EQ(trace.collectives.size(), 1u);
  EXPECT_FALSE(trace.collectives[0].bytes_known);
  const TraceSummary summary = summarize_traces({trace});
  ASSERT_EQ(summary.classes.size(), 1u);
  EXPECT_FALSE(summary.classes[0].bytes_known);
  EXPECT_FALSE(summary.classes[0].algbw_gbps);
}

TEST(NumberedTrace, PyTorchsSequenceNumberAndGroupAreReadFromTheRecord) {
  TempDir dir;
  const RankTrace trace = read_pytorch_trace(dir.write("rank0.json", R"json({
 "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 2},
 "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "c10d::allreduce_", "pid": 1, "tid": 7, "ts": 100.0, "dur": 50.0, "args": {}},
  {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 7, "ts": 102.0, "dur": 40.0,
   "args": {"Collective name": "allreduce", "In msg nelems": 10, "Out msg nelems": 10, "dtype": "Float",
            "Group size": 2, "Seq": 41, "Process Group Name": "3"}}
 ]})json"));
  ASSERT_EQ(trace.collectives.size(), 1u);
  EXPECT_EQ(trace.collectives[0].sequence, 41);
  EXPECT_EQ(trace.collectives[0].process_group, "3");
  EXPECT_EQ(trace.collectives[0].group_ranks, 2);
}

}  // namespace
}  // namespace commbench
