// Reading a trace as it streams: the events handed over one by one, the other members
// kept, the errors of a file that is no whole JSON trace (naming the byte), and what a
// c10d operator or gloo range becomes (its operation, type and size).
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "commbench/replay/pytorch_trace_reader.hpp"
#include "json_event_stream.hpp"
#include "pytorch_comm_events.hpp"
#include "temp_dir.hpp"
#include "usage_error.hpp"

namespace commbench {
namespace {

using testing::TempDir;
using testing::usage_error_of;

const char* kTrace = R"({"schemaVersion": 1,
 "distributedInfo": {"backend": "gloo", "rank": 1, "world_size": 2, "pg_count": 1,
                     "pg_config": [{"pg_name": "0", "pg_size": 2, "ranks": [0, 1]}]},
 "host_name": "n1",
 "traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#4", "ts": 100.0, "dur": 900.0},
  {"ph": "X", "cat": "cpu_op", "name": "c10d::allreduce_", "ts": 200.0, "dur": 5.0,
   "args": {"Input type": ["TensorList", ""], "Input Dims": [[[10, 100]], []]}},
  {"ph": "X", "cat": "user_annotation", "name": "gloo:all_reduce", "ts": 210.0, "dur": 50.0,
   "args": {"Input type": ["c10::BFloat16"], "Input Dims": [[1000]]}},
  {"ph": "X", "cat": "cpu_op", "name": "c10d::_reduce_scatter_base_", "ts": 300.0, "dur": 5.0,
   "args": {"Input type": ["float", "float"], "Input Dims": [[500], [1000]]}},
  {"ph": "X", "cat": "user_annotation", "name": "gloo:reduce_scatter", "ts": 310.0, "dur": 20.0, "args": {}},
  {"ph": "X", "cat": "cpu_op", "name": "c10d::barrier", "ts": 400.0, "dur": 5.0,
   "args": {"Input type": ["unsigned char"], "Input Dims": [[1]]}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 500.0, "dur": 5.0}
 ]})";

TEST(JsonEventStream, HandsOverEachEventAndKeepsTheOtherMembers) {
  TempDir dir;
  std::vector<std::string> names;
  const StreamedTrace trace = stream_trace_events(
      dir.write("t.json", kTrace), [](std::string_view text) { return text.find("aten::") == std::string_view::npos; },
      [&](const nlohmann::json& event) { names.push_back(event["name"]); });
  EXPECT_EQ(trace.events, 7u);
  ASSERT_EQ(names.size(), 6u);  // not the one the filter passed over
  EXPECT_EQ(names[1], "c10d::allreduce_");
  EXPECT_EQ(trace.members.at("distributedInfo")["pg_config"][0]["pg_size"], 2);
  EXPECT_EQ(trace.members.at("host_name"), "n1");
  EXPECT_EQ(trace.members.count("traceEvents"), 0u);
}

TEST(JsonEventStream, ATraceCutShortOrMalformedNamesTheFileAndByte) {
  TempDir dir;
  const auto all = [](std::string_view) { return true; };
  const auto read = [&](const std::string& path) { stream_trace_events(path, all, [](const nlohmann::json&) {}); };
  const std::string text(kTrace);
  const std::string cut = dir.write("cut.json", text.substr(0, 400));
  EXPECT_EQ(usage_error_of([&] { read(cut); }), cut + ": not a whole JSON trace: cut short after byte 400");
  // JSON, but not an object: no trace, which a folder's reading passes over.
  for (const char* text : {"[1, 2]", " null", "\"text\"", "12"}) {
    const std::string other = dir.write("other.json", text);
    EXPECT_TRUE(stream_trace_events(other, all, [](const nlohmann::json&) {}).not_an_object) << text;
    EXPECT_THROW(read_pytorch_trace(other), NotATrace) << text;
    EXPECT_EQ(usage_error_of([&] { read_pytorch_trace(other); }),
              other + ": not a Chrome trace (its JSON is not an object with a traceEvents array)");
  }
  const std::string neither = dir.write("neither.json", "op,bytes");
  EXPECT_EQ(usage_error_of([&] { read(neither); }), neither + ": not a whole JSON trace: malformed at byte 1");
  // A wanted event that is no JSON: the byte is the file's, not the event's.
  const std::string bad = dir.write("bad.json", R"({"traceEvents": [{"name": "c10d::x", "ts": 1.2.3}]})");
  EXPECT_EQ(usage_error_of([&] { read(bad); }),
            bad + ": not a whole JSON trace: malformed at byte 47");  // the second dot
  // A number beyond double's range is refused by the JSON parser without a position.
  const std::string huge = dir.write("huge.json", R"({"traceEvents": [{"name": "c10d::x", "ts": 4.9E104764}]})");
  EXPECT_EQ(usage_error_of([&] { read(huge); }),
            huge + ": not a whole JSON trace: a number out of range in the event at byte 18");
  const std::string text_ts = dir.write(
      "text-ts.json", R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "c10d::allreduce_", "ts": "1"}]})");
  EXPECT_EQ(
      usage_error_of([&] { read_pytorch_trace(text_ts); }),
      text_ts +
          ": not a trace torch.profiler wrote: event 'c10d::allreduce_' has a 'ts' that is no time in microseconds");
  const std::string step =
      dir.write("step.json", R"({"traceEvents": [{"ph": "X", "name": "ProfilerStep#x", "ts": 1}]})");
  EXPECT_EQ(usage_error_of([&] { read_pytorch_trace(step); }),
            step + ": not a trace torch.profiler wrote: event 'ProfilerStep#x' numbers no step");
  const std::string trailing = dir.write("trailing.json", R"({"traceEvents": []} x)");
  EXPECT_EQ(usage_error_of([&] { read(trailing); }), trailing + ": not a whole JSON trace: malformed at byte 21");
  EXPECT_EQ(usage_error_of([&] { read(dir.path("none.json")); }),
            dir.path("none.json") + ": cannot read (No such file or directory)");
}

TEST(PytorchTrace, CallsArePairedWithTheBackendsRangesAndSizedAsNcclTestsDoes) {
  TempDir dir;
  const RankTrace trace = read_pytorch_trace(dir.write("rank1.json", kTrace));
  EXPECT_EQ(trace.rank, 1);
  EXPECT_EQ(trace.world_size, 2);
  EXPECT_EQ(trace.backend, "gloo");
  EXPECT_EQ(trace.host, "n1");
  ASSERT_EQ(trace.steps.size(), 1u);
  EXPECT_EQ(trace.steps[0].number, 4);
  ASSERT_EQ(trace.collectives.size(), 3u);
  const TracedCollective& allreduce = trace.collectives[0];
  EXPECT_EQ(allreduce.op, "allreduce");
  EXPECT_EQ(allreduce.dtype, "bfloat16");  // from the gloo range: the operator's list has no type
  EXPECT_EQ(allreduce.bytes, 2000u);       // 10 x 100 elements of 2 bytes
  EXPECT_EQ(allreduce.group_ranks, 2);
  EXPECT_DOUBLE_EQ(allreduce.issued_us, 200.0);
  EXPECT_DOUBLE_EQ(allreduce.start_us, 210.0);
  EXPECT_DOUBLE_EQ(allreduce.end_us, 260.0);
  EXPECT_EQ(allreduce.step, 4);
  EXPECT_EQ(trace.collectives[1].op, "reducescatter");
  EXPECT_EQ(trace.collectives[1].bytes, 4000u);  // the scattered input, 1000 floats
  EXPECT_EQ(trace.collectives[2].op, "barrier");
  EXPECT_EQ(trace.collectives[2].bytes, 0u);
}

TEST(PytorchTrace, AListAllGathersSizeIsItsInputTimesTheGroupNotAScalar) {
  // c10d::allgather_ (FSDP1 on gloo): the output, a list of lists, has no recorded shape.
  TempDir dir;
  const RankTrace trace = read_pytorch_trace(dir.write("rank0.json", R"({
 "distributedInfo": {"backend": "gloo", "rank": 0, "world_size": 4, "pg_count": 1,
                     "pg_config": [{"pg_name": "0", "pg_size": 4, "ranks": [0, 1, 2, 3]}]},
 "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "c10d::allgather_", "ts": 200.0, "dur": 5.0,
   "args": {"Input type": ["", "TensorList", "", "Scalar", "Scalar"], "Input Dims": [[], [[1000]], [], [], []]}},
  {"ph": "X", "cat": "user_annotation", "name": "gloo:all_gather", "ts": 210.0, "dur": 50.0,
   "args": {"Input type": ["float"], "Input Dims": [[1000]]}}]})"));
  ASSERT_EQ(trace.collectives.size(), 1u);
  EXPECT_EQ(trace.collectives[0].op, "allgather");
  EXPECT_EQ(trace.collectives[0].dtype, "float32");
  EXPECT_EQ(trace.collectives[0].bytes, 16000u);  // 4 ranks x 1000 floats
}

TEST(PytorchTrace, ATraceWithoutTheJobOrItsCommunicationIsRefused) {
  TempDir dir;
  const std::string plain = dir.write("plain.json", R"({"traceEvents": []})");
  EXPECT_EQ(usage_error_of([&] { read_pytorch_trace(plain); }),
            plain + ": no distributedInfo: not the trace of a torch.distributed job's rank");
  const std::string quiet = dir.write(
      "quiet.json",
      R"({"distributedInfo": {"rank": 0, "world_size": 2}, "traceEvents": [{"ph": "X", "name": "aten::mm"}]})");
  EXPECT_EQ(usage_error_of([&] { read_pytorch_trace(quiet); }),
            quiet + ": no communication in the trace of rank 0 (1 events read)");
}

// Rank 0 on CPU: the training thread (tid 1) calls two all-reduces; gloo runs them on its
// own threads (7 and 8), partly at the same time.
const char* kCpuExposureTrace = R"({
 "distributedInfo": {"backend": "gloo", "rank": 0, "world_size": 2},
 "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "c10d::allreduce_", "pid": 5, "tid": 1, "ts": 100.0, "dur": 5.0,
   "args": {"Input type": ["float"], "Input Dims": [[10]]}},
  {"ph": "X", "cat": "user_annotation", "name": "gloo:all_reduce", "pid": 5, "tid": 7, "ts": 110.0, "dur": 100.0},
  {"ph": "X", "cat": "cpu_op", "name": "c10d::allreduce_", "pid": 5, "tid": 1, "ts": 150.0, "dur": 5.0,
   "args": {"Input type": ["float"], "Input Dims": [[10]]}},
  {"ph": "X", "cat": "user_annotation", "name": "gloo:all_reduce", "pid": 5, "tid": 8, "ts": 160.0, "dur": 100.0},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 5, "tid": 1, "ts": 120.0, "dur": 20.0},
  {"ph": "X", "cat": "cpu_op", "name": "aten::add_", "pid": 5, "tid": 1, "ts": 130.0, "dur": 20.0},
  {"ph": "X", "cat": "cpu_op", "name": "aten::copy_", "pid": 5, "tid": 1, "ts": 250.0, "dur": 30.0},
  {"ph": "X", "cat": "cpu_op", "name": "aten::copy_", "pid": 5, "tid": 7, "ts": 110.0, "dur": 100.0},
  {"ph": "X", "cat": "user_annotation", "name": "FSDP::all_gather", "pid": 5, "tid": 1, "ts": 100.0, "dur": 200.0},
  {"ph": "X", "cat": "cpu_op", "name": "autograd::engine::evaluate_function: MmBackward0", "pid": 5, "tid": 1,
   "ts": 160.0, "dur": 90.0}
 ]})";

TEST(PytorchTrace, OnCpuTheExposedTimeIsTheBackendsWhileTheCallingThreadRunsNoOperator) {
  TempDir dir;
  const RankTrace trace = read_pytorch_trace(dir.write("rank0.json", kCpuExposureTrace));
  // gloo ran over 110-260 (the two ranges overlap: 150 us, not 200). The training thread's
  // operators covered 120-150 and 250-260 of it; its own copies on gloo's thread, FSDP's
  // range and autograd's wrapper around a wait are no compute: 110 us are exposed.
  ASSERT_TRUE(trace.exposed_seconds);
  EXPECT_NEAR(*trace.exposed_seconds, 110e-6, 1e-12);
  EXPECT_TRUE(trace.exposed_on_the_training_thread);
  // Without the callers' threads the trace cannot tell the training thread: nothing is said.
  std::string untold(kCpuExposureTrace);
  for (std::size_t at; (at = untold.find("\"tid\": 1,")) != std::string::npos;) untold.erase(at, 10);
  const RankTrace without = read_pytorch_trace(dir.write("untold.json", untold));
  EXPECT_FALSE(without.exposed_seconds);
  EXPECT_FALSE(without.exposed_on_the_training_thread);
}

// A GPU rank: one allreduce whose NCCL kernel ran 1000-1400, and compute kernels, one with
// plain text and one whose name holds escapes and brackets.
const char* kGpuExposureTrace = R"json({
 "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 2},
 "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "c10d::allreduce_", "pid": 1, "tid": 7, "ts": 100.0, "dur": 50.0,
   "args": {"Input Dims": [[1000]], "Input type": ["float"]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 7, "ts": 120.0, "dur": 5.0,
   "args": {"correlation": 500}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
   "pid": 0, "tid": 9, "ts": 1000.0, "dur": 400.0, "args": {"correlation": 500}},
  {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 8, "ts": 1100.0, "dur": 100.0},
  {"ph": "X", "cat": "kernel", "name": "gemm \"tile [1]\" {x}", "pid": 0, "tid": 8, "ts": 1250, "dur": 50}
 ]})json";

TEST(PytorchTrace, ComputeKernelsOverlapNcclsWhetherReadFromTheirTextOrParsed) {
  TempDir dir;
  const RankTrace trace = read_pytorch_trace(dir.write("rank0.json", kGpuExposureTrace));
  ASSERT_TRUE(trace.exposed_seconds);
  EXPECT_NEAR(*trace.exposed_seconds, 250e-6, 1e-12);  // 400 us of NCCL, 150 under compute
  // A compute kernel's time that is no number is refused as before.
  std::string text_ts(kGpuExposureTrace);
  text_ts.replace(text_ts.find(R"("ts": 1100.0)"), 12, R"("ts": "1100")");
  const std::string path = dir.write("text-ts.json", text_ts);
  EXPECT_EQ(usage_error_of([&] { read_pytorch_trace(path); }),
            path + ": not a trace torch.profiler wrote: event 'gemm' has a 'ts' that is no time in microseconds");
}

TEST(JsonEventStream, AnEventAcrossChunksWithEscapesAndBracketsInItsStringsIsOneEvent) {
  TempDir dir;
  // Longer than one read of the file (1 MiB), so the event's strings cross a chunk's end; an
  // escaped quote followed by a bracket, and an escaped backslash before the closing quote.
  std::string filler;
  while (filler.size() < (std::size_t{3} << 20) / 2) filler += R"(x \"} \\)";
  const std::string text = R"({"traceEvents": [{"name": "big", "args": {"note": ")" + filler +
                           R"("}}, {"name": "c10d::x", "ts": 1}], "host_name": "n\"1"})";
  std::vector<std::string> names;
  const StreamedTrace trace = stream_trace_events(
      dir.write("t.json", text), [](std::string_view) { return true; },
      [&](const nlohmann::json& event) { names.push_back(event["name"]); });
  EXPECT_EQ(trace.events, 2u);
  EXPECT_EQ(names, (std::vector<std::string>{"big", "c10d::x"}));
  EXPECT_EQ(trace.members.at("host_name"), "n\"1");
}

TEST(PytorchTrace, OperatorNamesBecomeOperations) {
  EXPECT_EQ(canonical_comm_op("c10d::_allgather_base_"), "allgather");
  EXPECT_EQ(canonical_comm_op("c10d::allgather_into_tensor_coalesced_"), "allgather");
  EXPECT_EQ(canonical_comm_op("c10d::reduce_scatter_tensor_coalesced_"), "reducescatter");
  EXPECT_EQ(canonical_comm_op("gloo:all_to_all"), "alltoall");
  EXPECT_EQ(canonical_comm_op("c10d::recv_any_source_"), "recv");
  EXPECT_EQ(canonical_comm_op("c10d::monitored_barrier_"), "barrier");
  EXPECT_EQ(canonical_comm_op("c10d::wait"), "");
  EXPECT_EQ(canonical_comm_op("aten::all_reduce"), "");
}

TEST(PytorchTrace, TheProfilersEpochAndEachCallsThreadAreRead) {
  TempDir dir;
  const std::string with_epoch = std::string(kTrace).insert(1, R"("baseTimeNanoseconds": 1790857026000000000, )");
  const RankTrace trace = read_pytorch_trace(dir.write("rank1.json", with_epoch));
  ASSERT_TRUE(trace.epoch_offset_us.has_value());
  EXPECT_DOUBLE_EQ(*trace.epoch_offset_us, 1790857026000000.0);
  EXPECT_FALSE(trace.collectives[0].thread.has_value());  // these events name no thread
  EXPECT_FALSE(read_pytorch_trace(dir.write("rank0.json", kTrace)).epoch_offset_us.has_value());
  std::string threaded = kTrace;
  threaded.replace(threaded.find(R"("name": "c10d::allreduce_",)"), 0, R"("tid": 77, )");
  EXPECT_EQ(read_pytorch_trace(dir.write("threaded.json", threaded)).collectives[0].thread, 77);
}

}  // namespace
}  // namespace commbench
