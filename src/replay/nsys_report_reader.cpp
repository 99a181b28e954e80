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
#include "nccl_nvtx_payload.hpp"
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
  // The export's own facts: EXPORT_META_DATA, renamed META_DATA_EXPORT by nsys 2025.3.
  const char* meta = db.has_table("META_DATA_EXPORT")   ? "META_DATA_EXPORT"
                     : db.has_table("EXPORT_META_DATA") ? "EXPORT_META_DATA"
                                                        : nullptr;
  if (!db.has_table("StringIds") || meta == nullptr)
    throw UsageError(fmt::format("{}: an SQLite database, but not one `nsys export --type sqlite` wrote", path));
  ReportFacts facts;
  facts.version =
      db.first_text(fmt::format("SELECT value FROM {} WHERE name = 'EXPORT_PRODUCT_VERSION'", meta)).value_or("");
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

// Where NCCL's ranges sized their calls, and why some could not be.
struct NcclSizing {
  std::size_t without_payload = 0;  // the export holds no payload for the range
  std::size_t unreadable = 0;       // a payload of a schema or shape this reader does not know
  std::size_t without_ranks = 0;    // a per-rank size whose communicator's size is not in the report
};

// What an NCCL range's payload gave: none in the export, one this reader cannot read, or its
// members.
struct NcclRangeReading {
  bool in_export = false;
  std::optional<NcclRangePayload> payload;
};

// One of NCCL's ranges that can be a call, with what its payload says.
struct NcclRangeCall {
  json event;
  std::string op;
  NcclRangeReading reading;
};

// NCCL's payload holds one rank's part for these (an all-gather's send, a reduce-scatter's
// receive, an all-to-all's, gather's or scatter's part per peer); nccl-tests' size is the
// whole buffer.
bool payload_is_one_part(const std::string& op) {
  return op == "allgather" || op == "reducescatter" || op == "alltoall" || op == "gather" || op == "scatter";
}

// nccl-tests' bytes of a call from NCCL's payload and its communicator's size.
std::optional<std::uint64_t> nccl_tests_bytes(const NcclRangeCall& call, const std::map<std::uint64_t, int>& ranks,
                                              NcclSizing& sizing) {
  const std::optional<NcclRangePayload>& payload = call.reading.payload;
  if (!payload || !payload->message_bytes) {
    ++(call.reading.in_export ? sizing.unreadable : sizing.without_payload);
    return std::nullopt;
  }
  std::uint64_t bytes = *payload->message_bytes;
  if (payload_is_one_part(call.op)) {
    const auto found = payload->communicator ? ranks.find(*payload->communicator) : ranks.end();
    if (found == ranks.end()) {
      ++sizing.without_ranks;
      return std::nullopt;
    }
    bytes *= static_cast<std::uint64_t>(found->second);
  }
  return bytes;
}

struct ProcessEvents {
  PytorchCommEvents events;
  bool pytorch_calls = false;  // c10d:: ranges
  bool sized = false;          // ... with their shapes
  bool gpu = false;            // NCCL kernels of its own on a GPU
  bool backend = false;        // gloo's own ranges, on gloo's threads: the calls' runs
  // NCCL's ranges (ncclAllReduce, ...): the calls where PyTorch's ranges are absent.
  std::vector<NcclRangeCall> nccl_calls;

  // Adds NCCL's ranges as the calls where PyTorch named none, sized by their payloads and
  // the communicators' sizes (`ranks`, by NCCL's hash); what named them.
  CallSource settle_calls(const std::map<std::uint64_t, int>& ranks, NcclSizing& sizing) {
    if (pytorch_calls || backend) return CallSource::pytorch;  // gloo's ranges are PyTorch's too
    for (NcclRangeCall& call : nccl_calls) {
      if (const std::optional<std::uint64_t> bytes = nccl_tests_bytes(call, ranks, sizing))
        call.event["args"] = {{std::string(kNcclPayloadBytesArgument), *bytes}};
      events.add(call.event);
    }
    return nccl_calls.empty() ? CallSource::nccl_kernels : CallSource::nccl_ranges;
  }
};

// The ranges that can be a call, its run by gloo or a step (LIKE ignores case); a report
// of PyTorch's ranges holds one per operator, most of them the model's.
constexpr const char* kWantedNames =
    "name LIKE 'c10d::%' OR name LIKE 'gloo:%' OR name LIKE 'nccl%' OR name LIKE 'ProfilerStep#%' OR name LIKE "
    "'step%' OR name LIKE 'iteration %'";

// Every NVTX range with its name, domain and payload (an export without the column has
// none): PyTorch's, NCCL's and the user's.
std::string nvtx_ranges_sql(bool payloads) {
  return fmt::format(
      "SELECT e.start, e.end, COALESCE(e.text, s.value) AS name, e.globalTid, e.domainId AS domain, {} AS payload "
      "FROM NVTX_EVENTS e LEFT JOIN StringIds s ON e.textId = s.id WHERE e.eventType IN ({}, {}) AND e.end IS NOT "
      "NULL",
      payloads ? "e.binaryData" : "NULL", kNvtxPushPopRange, kNvtxStartEndRange);
}

// A call, its run by gloo or a step, added to its process's events.
void add_range(ProcessEvents& process, const std::string& text, double start_us, double end_us, std::int64_t thread,
               const std::string& torch_type, const NcclRangeReading& reading) {
  if (const std::optional<int> step = nvtx_step_number(text)) {
    process.events.add(chrome_event(fmt::format("ProfilerStep#{}", *step), start_us, end_us, thread, "", torch_type));
    return;
  }
  const PytorchNvtxRange range = parse_pytorch_nvtx_range(text);
  // ProcessGroupNCCL's own `nccl:all_reduce` ranges lie inside the c10d:: range of the same
  // call, and NCCL's API ranges (ncclAllReduce) name the call where those are absent.
  if (canonical_comm_op(range.name).empty() || range.name.rfind("nccl:", 0) == 0) return;
  if (range.name.rfind("nccl", 0) == 0) {
    process.nccl_calls.push_back(
        {chrome_event(range.name, start_us, end_us, thread, "", torch_type), canonical_comm_op(range.name), reading});
    return;
  }
  const bool backend = range.name.rfind("gloo:", 0) == 0;
  process.pytorch_calls = process.pytorch_calls || !backend;
  process.backend = process.backend || backend;
  process.sized = process.sized || !range.sizes.empty();  // a gloo range's shape sizes its call too
  process.events.add(chrome_event(range.name, start_us, end_us, thread, range.sizes, torch_type));
}

// What the ranges say, per process, and of NCCL's communicators.
struct ReportRanges {
  std::map<std::int64_t, ProcessEvents> processes;
  std::map<std::uint64_t, int> communicator_ranks;  // by NCCL's hash, from their creation's ranges
};

// One pass over the ranges: the wanted ones whole, and of PyTorch's aten:: operators (on
// CPU, the compute gloo's transfers can hide behind) only the times and thread, not the
// names. The events are ordered by time where they are used.
ReportRanges read_ranges(const SqliteDatabase& db, const ReportFacts& facts, const std::string& torch_type) {
  ReportRanges ranges;
  const NcclPayloadSchemas schemas(db);
  const bool blobs = db.has_column("NVTX_EVENTS", "binaryData");
  const std::string sql = fmt::format(
      "SELECT start, end, CASE WHEN name LIKE 'aten::%' THEN NULL ELSE name END, globalTid, domain, payload FROM ({}) "
      "WHERE name LIKE 'aten::%' OR {}",
      nvtx_ranges_sql(blobs), kWantedNames);
  db.each_row(sql, [&](const SqliteDatabase::Row& row) {
    const double start_us = facts.epoch_us + static_cast<double>(row.integer(0)) * 1e-3;
    const double end_us = facts.epoch_us + static_cast<double>(row.integer(1)) * 1e-3;
    const std::int64_t thread = row.integer(3);
    ProcessEvents& process = ranges.processes[pid_of(thread)];
    if (row.is_null(2)) {
      process.events.add_cpu_operator(thread, start_us, end_us);
      return;
    }
    const std::string name = row.text(2);
    NcclRangeReading reading;
    reading.in_export = blobs && !row.is_null(5);
    if (reading.in_export && !schemas.empty() && name.rfind("nccl", 0) == 0)
      reading.payload = schemas.decode(row.integer(4), row.bytes(5));
    // The communicator's size, for its calls' bytes: from its creation by ncclCommInitRank*
    // and its end, whose payloads are the communicator's own. ncclCommSplit's and
    // ncclCommShrink's payloads give the parent's size, not the new communicator's.
    const std::optional<NcclRangePayload>& payload = reading.payload;
    if (payload && payload->communicator && payload->ranks &&
        (name.rfind("ncclCommInitRank", 0) == 0 || name == "ncclCommDestroy" || name == "ncclCommAbort"))
      ranges.communicator_ranks[*payload->communicator] = *payload->ranks;
    add_range(process, name, start_us, end_us, thread, torch_type, reading);
  });
  return ranges;
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
void note_what_names_the_calls(const std::set<CallSource>& unsized, const NcclSizing& nccl,
                               std::vector<std::string>& notes) {
  if (unsized.count(CallSource::pytorch) > 0)
    notes.push_back(
        "PyTorch's ranges carry no shapes (emit_nvtx(record_shapes=True) adds them): their calls are counted, not "
        "sized");
  if (nccl.without_payload > 0)
    notes.push_back(
        "calls named by NCCL's own NVTX ranges (ncclAllReduce, ...) are counted, not sized: the export holds no "
        "payload for them, where NCCL writes the message size (export with `nsys export --type sqlite "
        "--include-blobs=true`; nsys 2025.3 and newer leave payloads out by default)");
  if (nccl.unreadable > 0)
    notes.push_back(
        "calls named by NCCL's own NVTX ranges are counted, not sized: their payloads are of a schema or layout this "
        "reader does not know");
  if (nccl.without_ranks > 0)
    notes.push_back(
        "all-gathers, reduce-scatters and all-to-alls named by NCCL's ranges are counted, not sized: NCCL's payload "
        "holds one rank's part, and the size of their communicator is in none of the report's ncclCommInitRank, "
        "ncclCommDestroy or ncclCommAbort ranges (a communicator made by ncclCommSplit names only its parent's "
        "size)");
  if (unsized.count(CallSource::nccl_kernels) > 0)
    notes.push_back(
        "no NVTX range names the calls: NCCL's kernels are the calls, counted and timed, not sized (a generic "
        "kernel, ncclDevKernel_Generic, names no operation and is not one)");
}

NsysProcess rank_of(std::int64_t pid, ProcessEvents& process, CallSource source,
                    std::vector<TracedCollective> collectives, const std::string& path, const ReportFacts& facts) {
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
  if (process.gpu || source == CallSource::nccl_ranges) rank.trace.backend = "nccl";
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
  ReportRanges ranges;
  if (db.has_table("NVTX_EVENTS")) ranges = read_ranges(db, facts, torch_type);
  read_nccl_kernels(db, facts, ranges.processes);
  NsysReport report;
  std::set<CallSource> unsized;
  NcclSizing nccl;
  for (auto& [pid, process] : ranges.processes) {
    const CallSource source = process.settle_calls(ranges.communicator_ranks, nccl);
    std::vector<TracedCollective> collectives = process.events.collectives(0);
    if (collectives.empty()) continue;
    if (source == CallSource::nccl_kernels || (source == CallSource::pytorch && !process.sized)) unsized.insert(source);
    report.sized_by_pytorch_ranges = report.sized_by_pytorch_ranges || (source == CallSource::pytorch && process.sized);
    report.processes.push_back(rank_of(pid, process, source, std::move(collectives), shown_path, facts));
  }
  if (report.processes.empty())
    throw UsageError(fmt::format(
        "{}: no communication in this report: no NVTX range of a c10d:: operator or of NCCL, and no NCCL kernel "
        "(PyTorch's ranges come with torch.autograd.profiler.emit_nvtx(), NCCL's with --trace=nvtx, its kernels "
        "with --trace=cuda)",
        shown_path));
  note_what_names_the_calls(unsized, nccl, report.notes);
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
