#include <array>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "commbench/core/error.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/core/size.hpp"
#include "commbench/replay/deepspeed_comms_log.hpp"

namespace commbench {

namespace {

// How DeepSpeed's log names read in nccl-tests' terms. DeepSpeed logs the input tensor:
// one rank's share for an all-gather (nccl-tests counts the gathered output), the whole
// input for a reduce-scatter (as nccl-tests does).
struct LoggedOperation {
  std::string_view name;
  std::string_view op;  // bench-replay's name: a collective's, or the log's own
  std::optional<Collective> collective;
  bool share_per_rank = false;
};

constexpr std::array<LoggedOperation, 21> kLoggedOperations{{
    {"all_reduce", "allreduce", Collective::allreduce, false},
    {"all_reduce_coalesced", "allreduce", Collective::allreduce, false},
    {"inference_all_reduce", "allreduce", Collective::allreduce, false},
    {"all_gather", "allgather", Collective::allgather, true},
    {"all_gather_into_tensor", "allgather", Collective::allgather, true},
    {"all_gather_base", "allgather", Collective::allgather, true},
    {"reduce_scatter", "reducescatter", Collective::reducescatter, false},
    {"reduce_scatter_tensor", "reducescatter", Collective::reducescatter, false},
    {"reduce_scatter_base", "reducescatter", Collective::reducescatter, false},
    {"all_to_all", "alltoall", Collective::alltoall, false},
    {"all_to_all_single", "alltoall", Collective::alltoall, false},
    {"broadcast", "broadcast", Collective::broadcast, false},
    {"reduce", "reduce", Collective::reduce, false},
    {"barrier", "barrier", std::nullopt, false},
    {"monitored_barrier", "barrier", std::nullopt, false},
    {"send", "send", std::nullopt, false},
    {"isend", "send", std::nullopt, false},
    {"recv", "recv", std::nullopt, false},
    {"irecv", "recv", std::nullopt, false},
    {"gather", "gather", std::nullopt, false},
    {"scatter", "scatter", std::nullopt, false},
}};

// log_summary's own barrier, called once per summary: not the job's.
constexpr std::string_view kSummaryBarrier = "log_summary_barrier";

const LoggedOperation* logged_operation(std::string_view name) {
  for (const LoggedOperation& operation : kLoggedOperations)
    if (operation.name == name) return &operation;
  return nullptr;
}

TracedClass class_of(const DeepSpeedLogRow& row, const LoggedOperation* operation, int ranks) {
  TracedClass c;
  c.op = operation != nullptr ? std::string(operation->op) : row.name;
  c.bytes = row.logged_bytes * ((operation != nullptr && operation->share_per_rank) ? ranks : 1);
  c.group_ranks = ranks;
  c.ranks = 1;
  c.calls = row.count;
  c.timed_calls = row.count;  // the log times every call it counts
  const double count = static_cast<double>(row.count);
  // With the straggler table, a call's time is the fastest rank's (the transfer once
  // every rank has arrived) and rank 0's excess is its wait, as a trace's are read.
  const double seconds = row.fastest_total_ms.value_or(row.total_ms) * 1e-3 / count;
  c.seconds = seconds;
  c.wait_seconds = row.straggler_total_ms.value_or(0) * 1e-3 / count;
  if (seconds > 0 && c.bytes > 0) {
    c.algbw_gbps = static_cast<double>(c.bytes) / seconds * 1e-9;
    if (operation != nullptr && operation->collective && ranks > 1)
      c.busbw_gbps = *c.algbw_gbps * bus_bandwidth_factor(*operation->collective, ranks);
  }
  return c;
}

bool repeats_a_name(const DeepSpeedCommsLog& log) {
  for (const DeepSpeedLogRow& row : log.rows)
    if (row.count > 1 && row.name != kSummaryBarrier) return true;
  return false;
}

}  // namespace

TraceSummary summarize_deepspeed_log(const DeepSpeedCommsLog& log, int ranks, std::vector<std::string>& notes) {
  if (ranks < 1) throw UsageError("--ranks: the number of ranks must be at least 1");
  TraceSummary summary;
  summary.world_size = ranks;
  summary.source = fmt::format("DeepSpeed comms log ({}, rank 0's calls)", log.source);
  for (const DeepSpeedLogRow& row : log.rows) {
    if (row.name == kSummaryBarrier) {
      notes.push_back(fmt::format("{}: {} left out: DeepSpeed's own barrier in log_summary(), not the job's", log.path,
                                  kSummaryBarrier));
      continue;
    }
    const LoggedOperation* operation = logged_operation(row.name);
    if (operation == nullptr)
      notes.push_back(
          fmt::format("{}: '{}' is no operation DeepSpeed names itself: its size is taken as logged and "
                      "no busbw is given",
                      log.path, row.name));
    summary.classes.push_back(class_of(row, operation, ranks));
    summary.calls += row.count;
  }
  if (summary.classes.empty())
    throw UsageError(fmt::format("{}: the comms log holds no communication of the job", log.path));
  notes.push_back(
      fmt::format("{}: the log names no group and no dtype: every call is taken as over the {} ranks of "
                  "--ranks, as DeepSpeed's own busbw does; sizes are as DeepSpeed rounds them "
                  "(two decimals of KB, MB, GB)",
                  log.path, ranks));
  if (log.running_totals)
    notes.push_back(
        fmt::format("{}: each verbose line's time is the running total of its operation's calls (DeepSpeed "
                    "reads the timer without resetting it); a call's own time is taken as the growth over "
                    "the previous call of that name",
                    log.path));
  if (log.source == "log_summary()" && repeats_a_name(log))
    notes.push_back(
        fmt::format("{}: an operation called more than once has inflated times in log_summary(): DeepSpeed "
                    "logs each call's time as the running total of that operation's calls; log the calls "
                    "with \"verbose\": true to have each call's own time",
                    log.path));
  if (log.source == "log_summary()" && !log.has_straggler_table)
    notes.push_back(
        fmt::format("{}: no straggler table (log_summary(show_straggler=True)): times are rank 0's, with "
                    "its waiting for other ranks in them",
                    log.path));
  for (const std::string& row : log.unjoined_straggler_rows)
    notes.push_back(
        fmt::format("{}: {}: the straggler figures are left out; the time is rank 0's, waiting included "
                    "(DeepSpeed logs its straggler analysis' own all_reduces in that table)",
                    log.path, row));
  if (log.summaries > 1)
    notes.push_back(fmt::format("{}: {} log_summary() tables; the last is read", log.path, log.summaries));
  summary.verdict = log.has_straggler_table
                        ? "a comms log shows rank 0's calls only: its wait is how much longer they took than the "
                          "fastest rank's"
                        : "a comms log shows rank 0's calls only: no wait or straggler can be read from it";
  return summary;
}

}  // namespace commbench
