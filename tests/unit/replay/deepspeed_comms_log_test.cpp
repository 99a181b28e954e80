// DeepSpeed's comms log read as bench-replay's classes: the real log_summary() tables and
// verbose lines of the zero3 fixture (tests/fixtures/traces/zero3, recorded by DeepSpeed
// 0.19.8), and the shapes a user's whole training log gives them: a launcher's prefix on
// every line, the debug mode's caller names, other log lines around the table, a log cut
// inside a row.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "commbench/replay/deepspeed_comms_log.hpp"
#include "temp_dir.hpp"
#include "usage_error.hpp"

namespace commbench {
namespace {

using testing::TempDir;
using testing::usage_error_of;

const std::string kZero3 = std::string(COMMBENCH_SOURCE_DIR) + "/tests/fixtures/traces/zero3/";

const DeepSpeedLogRow* row_named(const DeepSpeedCommsLog& log, const std::string& name, std::uint64_t bytes) {
  for (const DeepSpeedLogRow& row : log.rows)
    if (row.name == name && row.logged_bytes == bytes) return &row;
  return nullptr;
}

// The fixture's step: the 8 biases (1024 fp32, one rank's share 256 values = 1 KiB) and
// the 8 weights in one coalesced call (8 MiB a rank) gathered, one reduce-scatter of all
// gradients (32.03 MiB as DeepSpeed rounds it), the gradient norm (one fp64).
void expect_zero3_step(const DeepSpeedCommsLog& log) {
  const DeepSpeedLogRow* biases = row_named(log, "all_gather_into_tensor", 1024);
  const DeepSpeedLogRow* weights = row_named(log, "all_gather_into_tensor", 8u << 20);
  const DeepSpeedLogRow* gradients = row_named(log, "reduce_scatter_tensor", 33585889);
  const DeepSpeedLogRow* norm = row_named(log, "all_reduce", 8);
  ASSERT_NE(biases, nullptr);
  ASSERT_NE(weights, nullptr);
  ASSERT_NE(gradients, nullptr);
  ASSERT_NE(norm, nullptr);
  EXPECT_EQ(biases->count, 8u);
  EXPECT_EQ(weights->count, 1u);
  EXPECT_EQ(gradients->count, 1u);
  EXPECT_EQ(norm->count, 1u);
  EXPECT_GT(weights->total_ms, 0);
}

TEST(DeepSpeedCommsLog, ReadsTheSummaryTableDeepSpeedPrinted) {
  const DeepSpeedCommsLog log = read_deepspeed_comms_log(kZero3 + "comms-summary.txt");
  EXPECT_EQ(log.source, "log_summary()");
  EXPECT_EQ(log.summaries, 1u);
  EXPECT_FALSE(log.has_straggler_table);
  expect_zero3_step(log);
  ASSERT_NE(row_named(log, "log_summary_barrier", 0), nullptr);
}

TEST(DeepSpeedCommsLog, ReadsTheStragglerTableBesideTheSummary) {
  const DeepSpeedCommsLog log = read_deepspeed_comms_log(kZero3 + "comms-summary-straggler.txt");
  EXPECT_TRUE(log.has_straggler_table);
  expect_zero3_step(log);
  const DeepSpeedLogRow* weights = row_named(log, "all_gather_into_tensor", 8u << 20);
  ASSERT_TRUE(weights->fastest_total_ms.has_value());
  ASSERT_TRUE(weights->straggler_total_ms.has_value());
  // The fastest rank's time and rank 0's excess over it make up rank 0's time.
  EXPECT_NEAR(*weights->fastest_total_ms + *weights->straggler_total_ms, weights->total_ms, 0.02);
}

TEST(DeepSpeedCommsLog, AddsUpVerboseLinesInTheOrderTheyFirstAppear) {
  const DeepSpeedCommsLog log = read_deepspeed_comms_log(kZero3 + "comms-verbose.log");
  EXPECT_EQ(log.source, "verbose lines");
  EXPECT_EQ(log.verbose_calls, 11u);
  ASSERT_EQ(log.calls.size(), 11u);
  expect_zero3_step(log);
  // DeepSpeed logged running totals per name: the 8 bias gathers, launched within a few
  // milliseconds, each logged more than the 8 MiB gather before them. Undone, each is
  // its own launch.
  EXPECT_TRUE(log.running_totals);
  const DeepSpeedLogRow* biases = row_named(log, "all_gather_into_tensor", 1024);
  const DeepSpeedLogRow* weights = row_named(log, "all_gather_into_tensor", 8u << 20);
  EXPECT_LT(biases->total_ms, weights->total_ms / 10);
  EXPECT_EQ(log.calls.front().name, "all_gather_into_tensor");
  EXPECT_EQ(log.calls.front().logged_bytes, 8u << 20);
}

TEST(DeepSpeedCommsLog, TimesThatRiseAndFallAreTakenAsEachCallsOwn) {
  TempDir dir;
  std::string text;
  for (const char* ms : {"5.00", "3.00", "4.00", "2.00"})
    text += fmt::format(
        "[Rank 0] comm op: all_reduce | time (ms): {} | msg size: 4.0 KB | algbw (Gbps): 0.01 | "
        "busbw (Gbps): 0.01\n",
        ms);
  const DeepSpeedCommsLog log = read_deepspeed_comms_log(dir.write("v.log", text));
  EXPECT_FALSE(log.running_totals);
  ASSERT_EQ(log.rows.size(), 1u);
  EXPECT_EQ(log.rows[0].count, 4u);
  EXPECT_DOUBLE_EQ(log.rows[0].total_ms, 14.0);
}

TEST(DeepSpeedCommsLog, SummaryBecomesClassesInNcclTestsSizes) {
  std::vector<std::string> notes;
  const TraceSummary summary =
      summarize_deepspeed_log(read_deepspeed_comms_log(kZero3 + "comms-summary.txt"), 4, notes);
  EXPECT_EQ(summary.world_size, 4);
  EXPECT_EQ(summary.calls, 11u);  // log_summary's own barrier left out
  ASSERT_EQ(summary.classes.size(), 4u);
  const TracedClass& weights = summary.classes[1];
  EXPECT_EQ(weights.op, "allgather");
  EXPECT_EQ(weights.bytes, 32u << 20);  // the gathered output: 4 shares of 8 MiB
  EXPECT_EQ(weights.group_ranks, 4);
  ASSERT_TRUE(weights.busbw_gbps.has_value());
  EXPECT_NEAR(*weights.busbw_gbps, *weights.algbw_gbps * 0.75, 1e-12);
  EXPECT_EQ(summary.classes[2].op, "reducescatter");
  EXPECT_EQ(summary.classes[2].bytes, 33585889u);  // the whole input, as logged
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes.front().find("log_summary_barrier left out"), std::string::npos);
}

const char* kLabelledLog =
    "0: [2026-11-27 10:00:00] [INFO] [engine.py:1] step 10 loss 2.3\n"
    "0: Comm. Op            Message Size        Count               Total Latency(ms)   Avg Latency(ms)     "
    "tput_avg (Gbps)     busbw_avg (Gbps)    \n"
    "0: all_reduce | [Caller Func: get_grad_norm_direct]\n"
    "0:                     8.0 B               3                   3.00                1.00                0.00"
    "                0.00                \n"
    "0: reduce_scatter_tensor | [Caller Func: reduce_scatter_fn]\n"
    "0:                     1.5 GB              2                   400.00              200.00              64.00"
    "               48.00               \n"
    "0: Traceback (most recent call last):\n"
    "0:   File \"train.py\", line 3, in <module>\n";

TEST(DeepSpeedCommsLog, ReadsATableInAWholeLogWithALauncherPrefixAndCallerNames) {
  TempDir dir;
  const DeepSpeedCommsLog log = read_deepspeed_comms_log(dir.write("train.log", kLabelledLog));
  ASSERT_EQ(log.rows.size(), 2u);
  EXPECT_EQ(log.rows[0].name, "all_reduce");
  EXPECT_EQ(log.rows[0].caller, "get_grad_norm_direct");
  EXPECT_EQ(log.rows[0].count, 3u);
  EXPECT_EQ(log.rows[1].logged_bytes, 1610612736u);  // 1.5 GB in DeepSpeed's powers of 1024
  EXPECT_DOUBLE_EQ(log.rows[1].total_ms, 400.0);
  EXPECT_DOUBLE_EQ(*log.rows[1].logged_busbw_gbit, 48.0);
}

TEST(DeepSpeedCommsLog, TheLastOfSeveralSummariesIsRead) {
  TempDir dir;
  const std::string table =
      "Comm. Op            Message Size        Count               Total Latency(ms)   Avg Latency(ms)     "
      "tput_avg (Gbps)     busbw_avg (Gbps)    \nall_reduce\n                    4.0 KB              ";
  const std::string tail = "                   1.00                1.00                0.00                0.00\n";
  const DeepSpeedCommsLog log =
      read_deepspeed_comms_log(dir.write("two.log", table + "1" + tail + "epoch 2\n" + table + "5" + tail));
  EXPECT_EQ(log.summaries, 2u);
  ASSERT_EQ(log.rows.size(), 1u);
  EXPECT_EQ(log.rows[0].count, 5u);
}

TEST(DeepSpeedCommsLog, ALogCutInsideARowNamesTheLineAndByte) {
  TempDir dir;
  const std::string text(kLabelledLog);
  const std::size_t cut = text.find("400.00");
  const std::string path = dir.write("cut.log", text.substr(0, cut));
  const std::size_t row_start = text.rfind('\n', cut) + 1;
  EXPECT_EQ(usage_error_of([&] { read_deepspeed_comms_log(path); }),
            path + ": line 6 (byte offset " + std::to_string(row_start) +
                "): the file ends inside a log_summary row (a cut log?)");
}

TEST(DeepSpeedCommsLog, AFileWithoutTableOrVerboseLineIsRefused) {
  TempDir dir;
  const std::string path = dir.write("other.txt", "epoch 1 loss 2.0\n");
  EXPECT_EQ(usage_error_of([&] { read_deepspeed_comms_log(path); }),
            path +
                ": neither a DeepSpeed log_summary() table nor a verbose comms_logger line in it (and not a .json "
                "trace)");
  std::vector<std::string> notes;
  EXPECT_EQ(usage_error_of(
                [&] { summarize_deepspeed_log(read_deepspeed_comms_log(kZero3 + "comms-summary.txt"), 0, notes); }),
            "--ranks: the number of ranks must be at least 1");
}

}  // namespace
}  // namespace commbench
