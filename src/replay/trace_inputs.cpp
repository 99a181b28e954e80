#include "commbench/replay/trace_inputs.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "commbench/core/error.hpp"
#include "commbench/replay/deepspeed_comms_log.hpp"
#include "commbench/replay/nsys_report_reader.hpp"
#include "commbench/replay/pytorch_trace_reader.hpp"
#include "trace_notes.hpp"

namespace commbench {

namespace {

bool ends_with(const std::string& name, std::string_view suffix) {
  return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

bool is_trace_name(const std::string& name) { return ends_with(name, ".json") || ends_with(name, ".json.gz"); }

namespace {

// A folder's reports: `nsys export` leaves X.sqlite beside X.nsys-rep; the export is read.
std::vector<std::string> without_exported_reports(const std::vector<std::string>& found,
                                                  std::vector<std::string>& notes) {
  std::set<std::string> exported;
  for (const std::string& path : found)
    if (ends_with(path, ".sqlite")) exported.insert(path.substr(0, path.size() - 7));
  std::vector<std::string> kept;
  for (const std::string& path : found) {
    const std::string stem = path.substr(0, path.rfind('.'));
    if ((ends_with(path, ".nsys-rep") || ends_with(path, ".qdrep")) && exported.count(stem) > 0) {
      notes.push_back(fmt::format("{} passed over: its export {}.sqlite is read", path, stem));
      continue;
    }
    kept.push_back(path);
  }
  return kept;
}

}  // namespace

std::vector<TraceFile> listed_trace_files(const std::vector<std::string>& arguments, std::vector<std::string>& notes) {
  std::vector<TraceFile> files;
  for (const std::string& argument : arguments) {
    std::error_code error;
    const std::filesystem::file_status status = std::filesystem::status(argument, error);
    if (std::filesystem::is_regular_file(status) || status.type() == std::filesystem::file_type::not_found) {
      files.push_back({argument, false});  // a missing file is reported by its reading
      continue;
    }
    // A FIFO or a device would hold the read open for a writer that may never come.
    if (!std::filesystem::is_directory(status))
      throw UsageError(fmt::format("{}: not a file or folder of traces (a pipe or device is not read)", argument));
    std::vector<std::string> found;
    for (const auto& entry : std::filesystem::directory_iterator(argument, error)) {
      const std::string name = entry.path().filename().string();
      if (entry.is_regular_file() && (is_trace_name(name) || is_nsys_report_name(name)))
        found.push_back(entry.path().string());
    }
    if (error) throw UsageError(fmt::format("{}: cannot list ({})", argument, error.message()));
    if (found.empty())
      throw UsageError(
          fmt::format("{}: no trace (.json, .json.gz) or Nsight Systems report (.sqlite, .sqlite.gz, .nsys-rep) in "
                      "this folder",
                      argument));
    std::sort(found.begin(), found.end());
    for (const std::string& path : without_exported_reports(found, notes)) files.push_back({path, true});
  }
  return files;
}

namespace {

ReadInput read_deepspeed_log(const ReplayInputRequest& request, const std::string& path) {
  if (request.schedule_wanted)
    throw UsageError(
        fmt::format("--dump-schedule: needs the job's traces; {} is a comms log, which does not say "
                    "what ran between the calls",
                    path));
  const DeepSpeedCommsLog log = read_deepspeed_comms_log(path);
  if (request.ranks == 0)
    throw UsageError(fmt::format("{}: a DeepSpeed comms log does not say the world size: give --ranks N", path));
  ReadInput input;
  input.summary = summarize_deepspeed_log(log, request.ranks, input.notes);
  input.files = {path};
  input.format = "deepspeed comms log";
  // The log says nothing of nodes: the fabric is looked up as one node's when the ranks fit.
  return input;
}

ReadInput summarized(ReadInput input, std::vector<RankTrace> traces, const char* format) {
  input.nodes = node_count(traces);
  input.summary = summarize_traces(traces);
  input.notes.insert(input.notes.end(), input.summary.notes.begin(), input.summary.notes.end());
  input.traces = std::move(traces);
  input.format = format;
  return input;
}

}  // namespace

std::optional<RankTrace> read_listed_trace(const TraceFile& file, std::string& note) {
  try {
    return read_pytorch_trace(file.path);
  } catch (const NotATrace& e) {
    if (!file.in_folder) throw;
    note = fmt::format("{} passed over: not a Chrome trace", file.path);
    return std::nullopt;
  }
}

ReadInput summarize_pytorch_readings(ReadInput input, std::vector<RankTrace> traces) {
  if (traces.empty()) throw UsageError(fmt::format("no trace among the files given ({})", input.notes.front()));
  note_exposed_on_cpu(traces, input.notes);
  note_calls_without_a_run(traces, input.notes);
  note_runs_and_unknowns(traces, input.notes);
  return summarized(std::move(input), std::move(traces), "torch.profiler");
}

namespace {

ReadInput read_pytorch_traces(const std::vector<TraceFile>& found, std::vector<std::string> notes) {
  ReadInput input;
  input.notes = std::move(notes);
  std::vector<RankTrace> traces;
  for (const TraceFile& file : found) {
    std::string note;
    if (std::optional<RankTrace> trace = read_listed_trace(file, note)) {
      traces.push_back(std::move(*trace));
      input.files.push_back(file.path);
    } else {
      input.notes.push_back(std::move(note));
    }
  }
  return summarize_pytorch_readings(std::move(input), std::move(traces));
}

// The last number in a file's name ("rank3.sqlite", "report.12.nsys-rep"): the rank, where
// each rank has its report (`nsys profile -o rank%q{SLURM_PROCID}`).
std::optional<int> number_in_name(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  name = name.substr(0, name.find('.') == 0 ? name.size() : name.find('.', 0));
  const std::size_t last = name.find_last_of("0123456789");
  if (last == std::string::npos) return std::nullopt;
  std::size_t first = last;
  while (first > 0 && std::isdigit(static_cast<unsigned char>(name[first - 1]))) --first;
  int number = -1;
  std::from_chars(name.data() + first, name.data() + last + 1, number);
  return number;
}

// A report does not say which rank a process was: one process per report numbered in its
// name (0 to N-1) is that rank; otherwise ranks follow the files' and processes' order.
void number_ranks(std::vector<std::pair<std::string, NsysProcess>>& processes, std::vector<std::string>& notes) {
  const int world = static_cast<int>(processes.size());
  std::set<int> named;
  for (const auto& [path, process] : processes)
    if (const std::optional<int> number = number_in_name(path); number && *number < world) named.insert(*number);
  std::set<std::string> files;
  for (const auto& entry : processes) files.insert(entry.first);
  const bool by_name = static_cast<int>(named.size()) == world && static_cast<int>(files.size()) == world;
  for (int i = 0; i < world; ++i) {
    RankTrace& trace = processes[static_cast<std::size_t>(i)].second.trace;
    trace.rank = by_name ? *number_in_name(trace.path) : i;
    trace.world_size = world;
    for (TracedCollective& call : trace.collectives)
      if (call.group_ranks == 0) call.group_ranks = world;
  }
  if (!by_name)
    notes.push_back(
        fmt::format("the reports do not say which process was which rank, nor do their names (one report "
                    "per rank, numbered 0 to {}): ranks follow the files' order, then the process ids",
                    world - 1));
  notes.push_back(
      fmt::format("the reports do not say the process groups: every call is taken as one over all {} "
                  "process{}",
                  world, world == 1 ? "" : "es"));
}

// One process in two reports is one rank given twice (a file named twice, or a copy):
// counted twice, it would be a rank of its own.
void refuse_a_process_twice(const std::vector<std::pair<std::string, NsysProcess>>& processes) {
  std::map<std::pair<std::string, std::int64_t>, const std::string*> seen;
  for (const auto& [path, process] : processes) {
    const auto [found, added] = seen.emplace(std::make_pair(process.trace.host, process.pid), &path);
    if (!added)
      throw UsageError(fmt::format("{}: process {} on {} is also in {}: one rank given twice", path, process.pid,
                                   process.trace.host.empty() ? "its host" : process.trace.host, *found->second));
  }
}

ReadInput read_nsys_reports(const ReplayInputRequest& request, const std::vector<TraceFile>& found,
                            std::vector<std::string> notes) {
  ReadInput input;
  input.notes = std::move(notes);
  std::vector<std::pair<std::string, NsysProcess>> processes;
  bool sized_by_pytorch_ranges = false;
  for (const TraceFile& file : found) {
    NsysReport report = read_nsys_report(file.path, request.element_type, request.export_limit_seconds);
    for (NsysProcess& process : report.processes) processes.emplace_back(file.path, std::move(process));
    // Each report's notes, said once for all.
    for (const std::string& note : report.notes)
      if (std::find(input.notes.begin(), input.notes.end(), note) == input.notes.end()) input.notes.push_back(note);
    sized_by_pytorch_ranges = sized_by_pytorch_ranges || report.sized_by_pytorch_ranges;
    input.files.push_back(file.path);
  }
  refuse_a_process_twice(processes);
  number_ranks(processes, input.notes);
  if (sized_by_pytorch_ranges)
    input.notes.push_back(fmt::format(
        "PyTorch's NVTX ranges give element counts, not types: calls are sized as {} (--dtype)", request.element_type));
  std::vector<RankTrace> traces;
  for (auto& entry : processes) traces.push_back(std::move(entry.second.trace));
  note_exposed_on_cpu(traces, input.notes);
  note_calls_without_a_run(traces, input.notes);
  note_runs_and_unknowns(traces, input.notes);
  return summarized(std::move(input), std::move(traces), "nsys");
}

}  // namespace

std::vector<std::string> files_read_from(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    std::error_code error;
    if (!std::filesystem::is_directory(path, error)) {
      files.push_back(path);
      continue;
    }
    for (const auto& entry : std::filesystem::directory_iterator(path, error)) {
      const std::string name = entry.path().filename().string();
      if (entry.is_regular_file(error) && (is_trace_name(name) || is_nsys_report_name(name)))
        files.push_back(entry.path().string());
    }
  }
  return files;
}

std::string trace_type_name(DataType type) {
  switch (type) {
    case DataType::float16: return "float16";
    case DataType::float32: return "float32";
    case DataType::float64: return "float64";
    case DataType::float8_e4m3: return "float8_e4m3";
    case DataType::float8_e5m2: return "float8_e5m2";
    default: return std::string(name_of(type));
  }
}

int node_count(const std::vector<RankTrace>& traces) {
  std::set<std::string> hosts;
  for (const RankTrace& trace : traces) hosts.insert(trace.host);
  return std::max<int>(1, static_cast<int>(hosts.size()));
}

ReadInput read_traces(const ReplayInputRequest& request) {
  std::vector<std::string> notes;
  const std::vector<TraceFile> found = listed_trace_files(request.paths, notes);
  std::vector<std::string> logs, reports;
  for (const TraceFile& file : found) {
    if (is_nsys_report_name(file.path))
      reports.push_back(file.path);
    else if (!is_trace_name(file.path))
      logs.push_back(file.path);
  }
  if (logs.empty() && request.ranks != 0)
    throw UsageError("--ranks: only for a DeepSpeed comms log (a trace says its world size)");
  if (!reports.empty() && reports.size() != found.size())
    throw UsageError(
        fmt::format("{}: Nsight Systems reports are read on their own, not with traces or logs", reports.front()));
  if (!reports.empty()) return read_nsys_reports(request, found, std::move(notes));
  if (logs.empty()) return read_pytorch_traces(found, std::move(notes));
  if (found.size() > 1)
    throw UsageError(
        fmt::format("{}: a DeepSpeed comms log is read on its own, not with other files (a .json trace "
                    "ends in .json or .json.gz)",
                    logs.front()));
  return read_deepspeed_log(request, logs.front());
}

}  // namespace commbench
