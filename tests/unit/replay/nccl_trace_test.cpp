// A GPU job's torch.profiler trace with NCCL: what the NCCL kernels' names say (algorithm
// and protocol), and a rank's calls sized from PyTorch's record_param_comms and timed by the
// kernels that ran them. The events below are laid out as torch.profiler writes them for
// NCCL (the c10d operator, record_param_comms with "Collective name", "In msg nelems",
// "Out msg nelems" and "dtype", the kernel on the GPU's stream); no GPU trace of this
// project's own is committed yet (docs/replay.md).
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "commbench/replay/nccl_kernel_name.hpp"
#include "commbench/replay/pytorch_trace_reader.hpp"
#include "commbench/replay/trace_summary.hpp"
#include "temp_dir.hpp"

namespace commbench {
namespace {

using testing::TempDir;

TEST(NcclKernelName, BothNamingSchemesAndTheGenericKernel) {
  const auto kernel = [](std::string_view name) { return parse_nccl_kernel_name(name).value(); };
  // NCCL before 2.19: coll, algorithm, protocol, then the reduction and type.
  NcclKernelName old = kernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)");
  EXPECT_EQ(old.op, "allreduce");
  EXPECT_EQ(old.algo, "RING");
  EXPECT_EQ(old.proto, "LL");
  old = kernel("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)");
  EXPECT_EQ(old.op, "sendrecv");
  EXPECT_EQ(old.proto, "SIMPLE");
  // NCCL 2.19 and later: coll, the reduction and type where it has them, algorithm, protocol.
  NcclKernelName dev = kernel("ncclDevKernel_AllReduce_Sum_bf16_NVLS_TREE_SIMPLE(ncclDevKernelArgsStorage<4096ul>)");
  EXPECT_EQ(dev.op, "allreduce");
  EXPECT_EQ(dev.algo, "NVLS_TREE");
  EXPECT_EQ(dev.proto, "SIMPLE");
  dev = kernel("ncclDevKernel_AllGather_RING_LL128");
  EXPECT_EQ(dev.op, "allgather");
  EXPECT_EQ(dev.algo, "RING");
  EXPECT_EQ(dev.proto, "LL128");
  dev = kernel("ncclDevKernel_ReduceScatter_Sum_f32_COLLNET_DIRECT_SIMPLE");
  EXPECT_EQ(dev.op, "reducescatter");
  EXPECT_EQ(dev.algo, "COLLNET_DIRECT");
  dev = kernel("ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>)");
  EXPECT_EQ(dev.op, "");
  EXPECT_EQ(dev.algo, "");
  EXPECT_FALSE(parse_nccl_kernel_name("void at::native::vectorized_elementwise_kernel<4>(int)"));
  EXPECT_FALSE(parse_nccl_kernel_name("ncclKernel_Unknown_RING_LL"));
}

// Rank 0 of 2: an all-reduce and an all-gather on one NCCL group, in a profiler step.
const char* kNcclTrace = R"json({
 "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 2,
                     "pg_config": [{"pg_name": "0", "pg_size": 2, "ranks": [0, 1]}]},
 "traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "ts": 100.0, "dur": 9000.0},
  {"ph": "X", "cat": "cpu_op", "name": "c10d::allreduce_", "ts": 200.0, "dur": 30.0, "args": {}},
  {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "ts": 205.0, "dur": 20.0,
   "args": {"Collective name": "allreduce", "In msg nelems": 1048576, "Out msg nelems": 1048576, "dtype": "BFloat16",
            "Group size": 2}},
  {"ph": "X", "cat": "user_annotation", "name": "nccl:all_reduce", "ts": 210.0, "dur": 10.0},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
   "ts": 400.0, "dur": 1000.0, "args": {"stream": 20, "Collective name": "allreduce"}},
  {"ph": "X", "cat": "cpu_op", "name": "c10d::_allgather_base_", "ts": 300.0, "dur": 30.0, "args": {}},
  {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "ts": 305.0, "dur": 20.0,
   "args": {"Collective name": "_allgather_base", "In msg nelems": 1000, "Out msg nelems": 2000, "dtype": "Float",
            "Group size": 2}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllGather_RING_SIMPLE", "ts": 1500.0, "dur": 50.0,
   "args": {"stream": 20}},
  {"ph": "X", "cat": "kernel", "name": "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_nn",
   "ts": 300.0, "dur": 600.0},
  {"ph": "X", "cat": "kernel", "name": "void at::native::vectorized_elementwise_kernel<4>(int)",
   "ts": 1300.0, "dur": 50.0},
  {"ph": "X", "cat": "kernel", "name": "void at::native::vectorized_elementwise_kernel<4>(int)",
   "ts": 1320.0, "dur": 10.0},
  {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "ts": 2000.0, "dur": 5.0,
   "args": {"Collective name": "wait", "In msg nelems": 0, "Out msg nelems": 0, "dtype": "Byte"}}
 ]})json";

TEST(NcclTrace, CallsSizedByPyTorchsRecordAndTimedByTheirKernels) {
  TempDir dir;
  const RankTrace trace = read_pytorch_trace(dir.write("rank0.json", kNcclTrace));
  EXPECT_EQ(trace.backend, "nccl");
  ASSERT_EQ(trace.collectives.size(), 2u);  // the wait is no call
  const TracedCollective& allreduce = trace.collectives[0];
  EXPECT_EQ(allreduce.op, "allreduce");
  EXPECT_EQ(allreduce.dtype, "bfloat16");
  EXPECT_EQ(allreduce.bytes, 1048576u * 2);
  EXPECT_EQ(allreduce.group_ranks, 2);
  EXPECT_DOUBLE_EQ(allreduce.issued_us, 200.0);
  EXPECT_DOUBLE_EQ(allreduce.start_us, 400.0);  // the kernel's, on the GPU
  EXPECT_DOUBLE_EQ(allreduce.end_us, 1400.0);
  EXPECT_EQ(allreduce.nccl_algo, "RING");
  EXPECT_EQ(allreduce.nccl_proto, "LL");
  EXPECT_EQ(allreduce.step, 3);
  const TracedCollective& allgather = trace.collectives[1];
  EXPECT_EQ(allgather.op, "allgather");
  EXPECT_EQ(allgather.bytes, 2000u * 4);  // the gathered output, as NCCL's record says it
  EXPECT_EQ(allgather.nccl_proto, "SIMPLE");
  EXPECT_DOUBLE_EQ(allgather.end_us - allgather.start_us, 50.0);

  // The all-reduce's kernel (400-1400 us) runs beside compute kernels over 400-900 and
  // 1300-1350: 450 us of it are exposed; the all-gather's 50 us all are.
  ASSERT_TRUE(trace.exposed_seconds);
  EXPECT_NEAR(*trace.exposed_seconds, 500e-6, 1e-12);

  const TraceSummary summary = summarize_traces({trace});
  ASSERT_EQ(summary.ranks.size(), 1u);
  EXPECT_EQ(summary.ranks[0].exposed_seconds, trace.exposed_seconds);
  ASSERT_EQ(summary.classes.size(), 2u);
  EXPECT_EQ(summary.classes[0].nccl_algo, "RING");
  EXPECT_EQ(summary.classes[0].nccl_proto, "LL");
}

// kNcclTrace with `events` (JSON objects, each after a comma) added at the end.
std::string nccl_trace_with(const std::string& events) {
  std::string text(kNcclTrace);
  text.replace(text.rfind("\n ]}"), std::string::npos, events + "\n ]}");
  return text;
}

TEST(NcclTrace, AClassWhoseKernelsDifferIsMixed) {
  TempDir dir;
  // The same all-reduce again, run by a tree kernel.
  const std::string text = nccl_trace_with(R"json(,
  {"ph": "X", "cat": "cpu_op", "name": "c10d::allreduce_", "ts": 3000.0, "dur": 30.0, "args": {}},
  {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "ts": 3005.0, "dur": 20.0,
   "args": {"Collective name": "allreduce", "In msg nelems": 1048576, "Out msg nelems": 1048576, "dtype": "BFloat16"}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_bf16_TREE_LL", "ts": 3100.0, "dur": 900.0})json");
  const TraceSummary summary = summarize_traces({read_pytorch_trace(dir.write("rank0.json", text))});
  EXPECT_EQ(summary.classes[0].calls, 2u);
  EXPECT_EQ(summary.classes[0].nccl_algo, "mixed");
  EXPECT_EQ(summary.classes[0].nccl_proto, "LL");
}

TEST(NcclTrace, KernelsOnTwoStreamsAtOnceAreExposedOnce) {
  TempDir dir;
  // A second all-reduce, on another communicator's stream, over 1450-2450: with the
  // all-gather's kernel (1500-1550) inside it, it adds 1000 us, all of them exposed.
  const std::string text = nccl_trace_with(R"json(,
  {"ph": "X", "cat": "cpu_op", "name": "c10d::allreduce_", "ts": 1440.0, "dur": 5.0, "args": {}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "ts": 1450.0, "dur": 1000.0,
   "args": {"stream": 24}})json");
  const RankTrace trace = read_pytorch_trace(dir.write("rank0.json", text));
  ASSERT_TRUE(trace.exposed_seconds);
  EXPECT_NEAR(*trace.exposed_seconds, 1450e-6, 1e-12);
  EXPECT_FALSE(trace.exposed_on_the_training_thread);
}

// A job running gloo and NCCL side by side: a broadcast on gloo, an all-reduce on NCCL run
// by the generic kernel, and a send run by a SendRecv kernel.
const char* kGlooBesideNcclTrace = R"json({
 "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 2},
 "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "c10d::broadcast_", "tid": 1, "ts": 0.0, "dur": 5.0,
   "args": {"Input type": ["float"], "Input Dims": [[100]]}},
  {"ph": "X", "cat": "cpu_op", "name": "c10d::allreduce_", "tid": 1, "ts": 10.0, "dur": 5.0,
   "args": {"Input type": ["float"], "Input Dims": [[1000]]}},
  {"ph": "X", "cat": "cpu_op", "name": "c10d::send", "tid": 1, "ts": 20.0, "dur": 5.0,
   "args": {"Input type": ["float"], "Input Dims": [[10]]}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)", "ts": 50.0,
   "dur": 10.0},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", "ts": 70.0,
   "dur": 4.0},
  {"ph": "X", "cat": "user_annotation", "name": "gloo:broadcast", "tid": 3, "ts": 200.0, "dur": 7.0,
   "args": {"Input type": ["float"], "Input Dims": [[100]]}}
 ]})json";

TEST(NcclTrace, AGenericKernelRunsNoCallGlooRunsAndSendRecvKernelsRunSends) {
  TempDir dir;
  const RankTrace trace = read_pytorch_trace(dir.write("rank0.json", kGlooBesideNcclTrace));
  ASSERT_EQ(trace.collectives.size(), 3u);
  const auto time_of = [](const TracedCollective& c) { return std::make_pair(c.start_us, c.end_us); };
  EXPECT_EQ(trace.collectives[0].op, "broadcast");
  EXPECT_EQ(time_of(trace.collectives[0]), std::make_pair(200.0, 207.0));  // gloo's range, not the kernel
  EXPECT_EQ(trace.collectives[1].op, "allreduce");
  EXPECT_EQ(time_of(trace.collectives[1]), std::make_pair(50.0, 60.0));  // the generic kernel
  EXPECT_EQ(trace.collectives[2].op, "send");
  EXPECT_EQ(time_of(trace.collectives[2]), std::make_pair(70.0, 74.0));  // the SendRecv kernel
}

TEST(NcclTrace, NcclRunsAnAllToAllAsSendRecvAndABarrierAsAnAllReduce) {
  TempDir dir;
  const RankTrace trace = read_pytorch_trace(dir.write("rank0.json", R"json({
 "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 2},
 "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "c10d::alltoall_base_", "ts": 0.0, "dur": 5.0,
   "args": {"Input type": ["float"], "Input Dims": [[100]]}},
  {"ph": "X", "cat": "cpu_op", "name": "c10d::barrier", "ts": 10.0, "dur": 5.0,
   "args": {"Input type": ["unsigned char"], "Input Dims": [[1]]}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", "ts": 50.0,
   "dur": 8.0},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_u8_RING_LL", "ts": 70.0, "dur": 3.0}
 ]})json"));
  ASSERT_EQ(trace.collectives.size(), 2u);
  EXPECT_EQ(trace.collectives[0].op, "alltoall");
  EXPECT_DOUBLE_EQ(trace.collectives[0].start_us, 50.0);
  EXPECT_EQ(trace.collectives[1].op, "barrier");
  EXPECT_DOUBLE_EQ(trace.collectives[1].start_us, 70.0);
  EXPECT_EQ(trace.collectives[1].nccl_algo, "RING");
}

// PyTorch links a kernel to the record_param_comms that launched it by "External id". Here
// the first all-reduce's kernel fell outside the capture: in order it would take the second
// call's kernel; linked, it has none and the second keeps its own. Beside them a gloo
// all-reduce (no NCCL record) takes gloo's range, not NCCL's generic kernel.
const char* kLinkedTrace = R"json({
 "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 2},
 "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "c10d::allreduce_", "ts": 100.0, "dur": 30.0, "args": {"External id": 9}},
  {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "ts": 105.0, "dur": 20.0,
   "args": {"External id": 10, "Collective name": "allreduce", "In msg nelems": 1000, "Out msg nelems": 1000,
            "dtype": "Float"}},
  {"ph": "X", "cat": "cpu_op", "name": "c10d::allreduce_", "ts": 200.0, "dur": 30.0, "args": {"External id": 19}},
  {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "ts": 205.0, "dur": 20.0,
   "args": {"External id": 20, "Collective name": "allreduce", "In msg nelems": 1000, "Out msg nelems": 1000,
            "dtype": "Float"}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)", "ts": 300.0,
   "dur": 50.0, "args": {"External id": 20, "Collective name": "allreduce"}},
  {"ph": "X", "cat": "cpu_op", "name": "c10d::allreduce_", "ts": 400.0, "dur": 10.0,
   "args": {"Input type": ["float"], "Input Dims": [[10]]}},
  {"ph": "X", "cat": "user_annotation", "name": "gloo:all_reduce", "ts": 450.0, "dur": 70.0,
   "args": {"Input type": ["float"], "Input Dims": [[10]]}}
 ]})json";

TEST(NcclTrace, KernelsArePairedByTheirExternalIdAndGlooCallsWithGloosRanges) {
  TempDir dir;
  const RankTrace trace = read_pytorch_trace(dir.write("rank0.json", kLinkedTrace));
  ASSERT_EQ(trace.collectives.size(), 3u);
  EXPECT_FALSE(trace.collectives[0].timed_by_backend);  // its kernel is not in the trace
  EXPECT_DOUBLE_EQ(trace.collectives[0].start_us, 100.0);
  EXPECT_TRUE(trace.collectives[1].timed_by_backend);
  EXPECT_DOUBLE_EQ(trace.collectives[1].start_us, 300.0);
  EXPECT_EQ(trace.collectives[1].bytes, 4000u);
  EXPECT_TRUE(trace.collectives[2].timed_by_backend);
  EXPECT_DOUBLE_EQ(trace.collectives[2].start_us, 450.0);  // gloo's range
  EXPECT_EQ(trace.collectives[2].bytes, 40u);
}

}  // namespace
}  // namespace commbench
