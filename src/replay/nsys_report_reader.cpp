#include "commbench/replay/nsys_report_reader.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include <fmt/format.h>

#include "commbench/core/error.hpp"
#include "commbench/replay/nccl_kernel_name.hpp"
#include "nsys_export.hpp"
#include "pytorch_comm_events.hpp"
#include "sqlite_database.hpp"
#include "trace_input.hpp"

namespace commbench {

namespace {

using nlohmann::json;

constexpr int kNvtxPushPopRange = 59;   // ENUM_NSYS_EVENT_TYPE: NvtxPushPopRange
constexpr int kNvtxStartEndRange = 60;  // NvtxStartEndRange

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// A serialized GlobalId holds the process id in bits 24..47.
std::int64_t pid_of(std::int64_t global_tid) { return (global_tid >> 24) & 0xFFFFFF; }

struct ReportFacts {
  double epoch_us = 0;  // the capture's start on the UTC clock: ranks' reports line up on it
  std::string host;
  std::string version;
};

ReportFacts report_facts(const SqliteDatabase& db, const std::string& path) {
  if (!db.has_table("StringIds") || !db.has_table("EXPORT_META_DATA"))
    throw UsageError(fmt::format("{}: an SQLite database, but not one `nsys export --type sqlite` wrote", path));
  ReportFacts facts;
  facts.version =
      db.first_text("SELECT value FROM EXPORT_META_DATA WHERE name = 'EXPORT_PRODUCT_VERSION'").value_or("");
  if (db.has_table("TARGET_INFO_SESSION_START_TIME"))
    db.each_row("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME",
                [&](const SqliteDatabase::Row& row) { facts.epoch_us = static_cast<double>(row.integer(0)) * 1e-3; });
  if (db.has_table("TARGET_INFO_SYSTEM_ENV"))
    facts.host = db.first_text("SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'Hostname'").value_or("");
  return facts;
}

// An NVTX range as a torch.profiler event, so that one set of rules sizes and pairs both.
json chrome_event(const std::string& name, double start_us, double end_us, std::int64_t thread,
                  const std::string& sizes, const std::string& torch_type) {
  json event{{"ph", "X"},      {"cat", "cpu_op"},          {"name", name},
             {"ts", start_us}, {"dur", end_us - start_us}, {"tid", thread}};
  if (sizes.empty()) return event;
  json dims = json::parse(sizes, nullptr, false);
  if (dims.is_discarded() || !dims.is_array()) return event;
  event["args"] = {{"Input Dims", dims}, {"Input type", json::array()}};
  for (std::size_t i = 0; i < dims.size(); ++i) event["args"]["Input type"].push_back(torch_type);
  return event;
}

// What names a process's calls: PyTorch's ranges, else NCCL's own, else NCCL's kernels.
enum class CallSource { pytorch, nccl_ranges, nccl_kernels };

struct ProcessEvents {
  PytorchCommEvents events;
  bool pytorch_calls = false;  // c10d:: ranges
  bool sized = false;          // ... with their shapes
  bool gpu = false;            // NCCL kernels of its own on a GPU
  bool backend = false;        // gloo's own ranges, on gloo's threads: the calls' runs
  // NCCL's ranges (ncclAllReduce, ...): the calls where PyTorch's ranges are absent.
  std::vector<json> nccl_calls;

  // Adds NCCL's ranges as the calls where PyTorch named none; what named them.
  CallSource settle_calls() {
    if (pytorch_calls || backend) return CallSource::pytorch;  // gloo's ranges are PyTorch's too
    for (const json& call : nccl_calls) events.add(call);
    return nccl_calls.empty() ? CallSource::nccl_kernels : CallSource::nccl_ranges;
  }
};

// The ranges that can be a call, its run by gloo or a step (LIKE ignores case); a report
// of PyTorch's ranges holds one per operator, most of them the model's.
constexpr const char* kWantedNames =
    "name LIKE 'c10d::%' OR name LIKE 'gloo:%' OR name LIKE 'nccl%' OR name LIKE 'ProfilerStep#%' OR name LIKE "
    "'step%' OR name LIKE 'iteration %'";

// Every NVTX range with its name: PyTorch's, NCCL's and the user's.
std::string nvtx_ranges_sql() {
  return fmt::format(
      "SELECT e.start, e.end, COALESCE(e.text, s.value) AS name, e.globalTid FROM NVTX_EVENTS e LEFT JOIN "
      "StringIds s ON e.textId = s.id WHERE e.eventType IN ({}, {}) AND e.end IS NOT NULL",
      kNvtxPushPopRange, kNvtxStartEndRange);
}

// A call, its run by gloo or a step, added to its process's events.
void add_range(ProcessEvents& process, const std::string& text, double start_us, double end_us, std::int64_t thread,
               const std::string& torch_type) {
  if (const std::optional<int> step = nvtx_step_number(text)) {
    process.events.add(chrome_event(fmt::format("ProfilerStep#{}", *step), start_us, end_us, thread, "", torch_type));
    return;
  }
  const PytorchNvtxRange range = parse_pytorch_nvtx_range(text);
  if (canonical_comm_op(range.name).empty()) return;
  if (range.name.rfind("nccl", 0) == 0) {
    process.nccl_calls.push_back(chrome_event(range.name, start_us, end_us, thread, "", torch_type));
    return;
  }
  const bool backend = range.name.rfind("gloo:", 0) == 0;
  process.pytorch_calls = process.pytorch_calls || !backend;
  process.backend = process.backend || backend;
  process.sized = process.sized || !range.sizes.empty();  // a gloo range's shape sizes its call too
  process.events.add(chrome_event(range.name, start_us, end_us, thread, range.sizes, torch_type));
}

// One pass over the ranges: the wanted ones whole, and of PyTorch's aten:: operators (on
// CPU, the compute gloo's transfers can hide behind) only the times and thread, not the
// names. The events are ordered by time where they are used.
std::map<std::int64_t, ProcessEvents> read_ranges(const SqliteDatabase& db, const ReportFacts& facts,
                                                  const std::string& torch_type) {
  std::map<std::int64_t, ProcessEvents> processes;
  const std::string sql = fmt::format(
      "SELECT start, end, CASE WHEN name LIKE 'aten::%' THEN NULL ELSE name END, globalTid FROM ({}) WHERE name "
      "LIKE 'aten::%' OR {}",
      nvtx_ranges_sql(), kWantedNames);
  db.each_row(sql, [&](const SqliteDatabase::Row& row) {
    const double start_us = facts.epoch_us + static_cast<double>(row.integer(0)) * 1e-3;
    const double end_us = facts.epoch_us + static_cast<double>(row.integer(1)) * 1e-3;
    const std::int64_t thread = row.integer(3);
    ProcessEvents& process = processes[pid_of(thread)];
    if (row.is_null(2))
      process.events.add_cpu_operator(thread, start_us, end_us);
    else
      add_range(process, row.text(2), start_us, end_us, thread, torch_type);
  });
  return processes;
}

// The NCCL kernels each process ran on its GPUs (CUDA trace): they time the calls and
// name NCCL's algorithm and protocol, as a torch.profiler trace's kernels do.
void read_nccl_kernels(const SqliteDatabase& db, const ReportFacts& facts,
                       std::map<std::int64_t, ProcessEvents>& processes) {
  if (!db.has_table("CUPTI_ACTIVITY_KIND_KERNEL")) return;
  db.each_row(
      "SELECT k.start, k.end, s.value, k.globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL k LEFT JOIN StringIds s ON s.id = "
      "k.demangledName ORDER BY k.start",
      [&](const SqliteDatabase::Row& row) {
        // A process of kernels only may still be a rank: its NCCL kernels are its calls.
        const auto found = processes.try_emplace(pid_of(row.integer(3))).first;
        const double start_us = facts.epoch_us + static_cast<double>(row.integer(0)) * 1e-3;
        const double end_us = facts.epoch_us + static_cast<double>(row.integer(1)) * 1e-3;
        const std::string name = row.text(2);
        if (!parse_nccl_kernel_name(name)) {
          found->second.events.add_compute_kernel(start_us, end_us);
          return;
        }
        found->second.events.add(
            json{{"ph", "X"}, {"cat", "kernel"}, {"name", name}, {"ts", start_us}, {"dur", end_us - start_us}});
        found->second.gpu = true;
      });
}

// What the report says of the calls' sizes, once per report.
void note_what_names_the_calls(const std::set<CallSource>& unsized, std::vector<std::string>& notes) {
  if (unsized.count(CallSource::pytorch) > 0)
    notes.push_back(
        "PyTorch's ranges carry no shapes (emit_nvtx(record_shapes=True) adds them): their calls are counted, not "
        "sized");
  if (unsized.count(CallSource::nccl_ranges) > 0)
    notes.push_back(
        "the calls are NCCL's own NVTX ranges (ncclAllReduce, ...); their payloads, which hold the message sizes, "
        "are not read: the calls are counted, not sized");
  if (unsized.count(CallSource::nccl_kernels) > 0)
    notes.push_back(
        "no NVTX range names the calls: NCCL's kernels are the calls, counted and timed, not sized (a generic "
        "kernel, ncclDevKernel_Generic, names no operation and is not one)");
}

NsysProcess rank_of(std::int64_t pid, ProcessEvents& process, std::vector<TracedCollective> collectives,
                    const std::string& path, const ReportFacts& facts) {
  NsysProcess rank;
  rank.pid = pid;
  rank.trace.path = path;
  rank.trace.host = facts.host;
  rank.trace.steps = process.events.steps();
  rank.trace.collectives = std::move(collectives);
  // Without kernels or gloo's ranges the calls' own ranges are all the report says of
  // their time.
  rank.trace.call_times_only = !process.gpu && !process.backend;
  if (process.backend) rank.trace.backend = "gloo";
  if (process.gpu) rank.trace.backend = "nccl";
  rank.trace.exposed_seconds = process.events.exposed_seconds();
  rank.trace.exposed_on_the_training_thread =
      rank.trace.exposed_seconds && process.events.exposed_on_the_training_thread();
  return rank;
}

NsysReport read_exported(const std::string& path, const std::string& shown_path, const std::string& element_type) {
  const std::string torch_type = torch_type_name(element_type);
  if (torch_type.empty()) throw UsageError(fmt::format("--dtype: '{}' is no element type PyTorch has", element_type));
  const SqliteDatabase db(path);
  const ReportFacts facts = report_facts(db, shown_path);
  if (!db.has_table("NVTX_EVENTS") && !db.has_table("CUPTI_ACTIVITY_KIND_KERNEL"))
    throw UsageError(fmt::format(
        "{}: no NVTX ranges and no CUDA kernels in this report: record with `nsys profile --trace=nvtx,cuda` and "
        "PyTorch's ranges on (torch.autograd.profiler.emit_nvtx(record_shapes=True))",
        shown_path));
  std::map<std::int64_t, ProcessEvents> processes;
  if (db.has_table("NVTX_EVENTS")) processes = read_ranges(db, facts, torch_type);
  read_nccl_kernels(db, facts, processes);
  NsysReport report;
  std::set<CallSource> unsized;
  for (auto& [pid, process] : processes) {
    const CallSource source = process.settle_calls();
    std::vector<TracedCollective> collectives = process.events.collectives(0);
    if (collectives.empty()) continue;
    if (source != CallSource::pytorch || !process.sized) unsized.insert(source);
    report.sized_by_pytorch_ranges = report.sized_by_pytorch_ranges || (source == CallSource::pytorch && process.sized);
    report.processes.push_back(rank_of(pid, process, std::move(collectives), shown_path, facts));
  }
  if (report.processes.empty())
    throw UsageError(fmt::format(
        "{}: no communication in this report: no NVTX range of a c10d:: operator or of NCCL, and no NCCL kernel "
        "(PyTorch's ranges come with torch.autograd.profiler.emit_nvtx(), NCCL's with --trace=nvtx, its kernels "
        "with --trace=cuda)",
        shown_path));
  note_what_names_the_calls(unsized, report.notes);
  return report;
}

}  // namespace

bool is_nsys_report_name(std::string_view name) {
  return ends_with(name, ".sqlite") || ends_with(name, ".sqlite.gz") || ends_with(name, ".nsys-rep") ||
         ends_with(name, ".qdrep");
}

PytorchNvtxRange parse_pytorch_nvtx_range(std::string_view text) {
  PytorchNvtxRange range;
  const std::size_t comma = text.find(", ");
  range.name = std::string(text.substr(0, comma));
  constexpr std::string_view kSizes = ", sizes = ";
  const std::size_t sizes = text.find(kSizes);
  if (sizes == std::string_view::npos) return range;
  const std::size_t open = sizes + kSizes.size();
  if (open >= text.size() || text[open] != '[') return range;
  int depth = 0;
  for (std::size_t i = open; i < text.size(); ++i) {
    if (text[i] == '[') ++depth;
    if (text[i] == ']' && --depth == 0) {
      range.sizes = std::string(text.substr(open, i - open + 1));
      break;
    }
  }
  return range;
}

std::optional<int> nvtx_step_number(std::string_view text) {
  std::string lowered;
  for (const char c : text) lowered += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const std::string_view prefix : {"profilerstep#", "step#", "step ", "iteration "}) {
    if (lowered.rfind(prefix, 0) != 0) continue;
    int number = -1;
    const char* first = lowered.c_str() + prefix.size();
    const char* last = lowered.c_str() + lowered.size();
    const auto [end, error] = std::from_chars(first, last, number);
    if (error == std::errc() && end == last && number >= 0) return number;
  }
  return std::nullopt;
}

NsysReport read_nsys_report(const std::string& path, const std::string& element_type, double export_limit_seconds) {
  if (ends_with(path, ".nsys-rep") || ends_with(path, ".qdrep")) {
    const ExportedReport exported = export_nsys_report(path, export_limit_seconds);
    return read_exported(exported.sqlite_path(), path, element_type);
  }
  if (!looks_like_sqlite(path)) {
    const TraceInput readable(path);  // UsageError for a file that cannot be read
    throw UsageError(fmt::format("{}: not an SQLite database (`nsys export --type sqlite` writes one)", path));
  }
  return read_exported(path, path, element_type);
}

}  // namespace commbench
