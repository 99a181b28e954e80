#include "commbench/cli/bench_replay_app.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commbench/cli/command_shell.hpp"
#include "commbench/cli/flag_values.hpp"
#include "commbench/cli/sweep_cost_model.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/input_file.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/replay/pytorch_trace_reader.hpp"
#include "commbench/replay/trace_summary.hpp"
#include "commbench/report/reporter_set.hpp"
#include "command_line_parser.hpp"
#include "replay_fabric.hpp"
#include "replay_records.hpp"

namespace commbench {

namespace {

constexpr const char* kProgram = "bench-replay";
constexpr const char* kReplaySchema = "commbench.replay/1";

struct ReplayOptions {
  std::vector<std::string> traces;  // files or folders
  std::string fabric_path;          // --fabric: a bench-collectives CSV
  JobOptions job;                   // --csv, --json, --force
};

void add_replay_options(CLI::App& app, ReplayOptions& options) {
  // Checked in validate, not by CLI11: --version and --help need no trace.
  app.add_option("TRACE", options.traces,
                 "A rank's torch.profiler trace (.json or .json.gz), or a folder of them; one file per rank");
  add_parsed_option(
      app, "--fabric", options.fabric_path,
      [](const std::string& text) { return non_empty_file_name(text, "--fabric"); },
      "A bench-collectives CSV from the same cluster: each class of calls against the busbw it measured at that "
      "operation, size and group",
      "FILE");
  add_result_file_options(app, options.job.files,
                          "CSV: a 'collective' line per class of calls and a 'rank' line per trace",
                          "JSON (commbench.replay/1): the same records, the files read and the verdict");
}

bool is_trace_name(const std::string& name) {
  const auto ends = [&](std::string_view suffix) {
    return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends(".json") || ends(".json.gz");
}

struct TraceFile {
  std::string path;
  bool in_folder = false;  // found in a folder given, not named
};

// The files to read: each file as given, each folder's .json and .json.gz files in name
// order.
std::vector<TraceFile> trace_files(const std::vector<std::string>& arguments) {
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
    for (const auto& entry : std::filesystem::directory_iterator(argument, error))
      if (entry.is_regular_file() && is_trace_name(entry.path().filename().string()))
        found.push_back(entry.path().string());
    if (error) throw UsageError(fmt::format("{}: cannot list ({})", argument, error.message()));
    if (found.empty()) throw UsageError(fmt::format("{}: no .json or .json.gz trace in this folder", argument));
    std::sort(found.begin(), found.end());
    for (const std::string& path : found) files.push_back({path, true});
  }
  return files;
}

std::string fabric_basis(const ReplayOptions& options) { return "--fabric " + options.fabric_path; }

std::string fabric_json(const ReplayOptions& options, const FabricComparison* fabric) {
  if (fabric == nullptr) return "null";
  nlohmann::json figures;
  figures["basis"] = fabric_basis(options);
  figures["job_seconds"] = fabric->job_seconds;
  figures["fabric_seconds"] = fabric->fabric_seconds;
  figures["verdict"] = fabric->verdict;
  return figures.dump();
}

void write_replay_files(const ReplayOptions& options, const TraceSummary& summary, const FabricComparison* fabric,
                        RunContext context, const std::vector<std::string>& files) {
  if (options.job.files.csv_path.empty() && options.job.files.json_path.empty()) return;
  context.record_kind = "collective";
  context.mixed_record_kinds = {"collective", "rank"};
  ReporterSet reporters = ReporterSet::open(file_outputs(options.job.files));
  reporters.begin(context);
  add_replay_records([&](const Record& record) { reporters.add_record(record); }, summary, fabric);
  RunSummary end;
  end.rows = summary.classes.size() + summary.ranks.size();
  end.sections = {{"traces", nlohmann::json(files).dump()},
                  {"world_size", std::to_string(summary.world_size)},
                  {"backend", nlohmann::json(summary.backend).dump()},
                  {"calls_per_rank", std::to_string(summary.calls)},
                  {"straggler", summary.straggler ? std::to_string(*summary.straggler) : "null"},
                  {"verdict", nlohmann::json(summary.verdict).dump()},
                  {"fabric", fabric_json(options, fabric)},
                  {"exit_code", "0"}};
  reporters.finish(end);
}

// The nodes the job ran on: its traces' hosts (one when they do not say).
int node_count(const std::vector<RankTrace>& traces) {
  std::set<std::string> hosts;
  for (const RankTrace& trace : traces) hosts.insert(trace.host);
  return std::max<int>(1, static_cast<int>(hosts.size()));
}

std::string read_and_report(const ReplayOptions& options, const std::string& command_line) {
  const auto started = std::chrono::steady_clock::now();
  std::vector<RankTrace> traces;
  std::vector<std::string> files;
  std::vector<std::string> notes;
  for (const TraceFile& file : trace_files(options.traces)) {
    try {
      traces.push_back(read_pytorch_trace(file.path));
      files.push_back(file.path);
    } catch (const NotATrace& e) {
      if (!file.in_folder) throw;
      notes.push_back(fmt::format("{} passed over: not a Chrome trace", file.path));
    }
  }
  if (traces.empty()) throw UsageError(fmt::format("no trace among the files given ({})", notes.front()));
  const int nodes = node_count(traces);
  const TraceSummary summary = summarize_traces(std::move(traces));
  std::optional<FabricComparison> fabric;
  if (!options.fabric_path.empty())
    fabric = compare_with_fabric(
        summary, SweepCostModel(read_input_file(options.fabric_path, fabric_basis(options)), fabric_basis(options)), nodes);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  print_replay_report(summary, fabric ? &*fabric : nullptr);
  for (const std::string& note : notes) fmt::print("# note: {}\n", note);
  RunContext context = context_without_job(kReplaySchema, kProgram, command_line,
                                            {{"traces", std::to_string(files.size())}, {"format", "torch.profiler"}});
  context.ranks = summary.world_size;
  context.notes = notes;
  if (fabric) context.notes.insert(context.notes.end(), fabric->notes.begin(), fabric->notes.end());
  write_replay_files(options, summary, fabric ? &*fabric : nullptr, std::move(context), files);
  return fmt::format("# {} trace{} read in {} s", files.size(), files.size() == 1 ? "" : "s",
                     significant_text(seconds, 3));
}

}  // namespace

int run_bench_replay(int argc, char** argv) {
  const Command<ReplayOptions> command{
      kProgram,
      "bench-replay: a training job's own traces (torch.profiler, one file per rank) read as the collectives it ran: "
      "sizes, times, bandwidth, and which rank the others waited for.",
      kReplaySchema,
      ProfileCategory::patterns,
      add_replay_options,
      [](const CLI::App&, ReplayOptions& options) {
        if (options.traces.empty()) throw UsageError("TRACE: name at least one trace file or folder (see --help)");
      },
      // Reading traces needs no job: without_job does all of it.
      [](const ReplayOptions&, JobSession&) -> int {
        throw BackendError("internal error: bench-replay started a job it does not use");
      },
      false,
      {},
      [](const ReplayOptions& options, bool reporting, const std::string& command_line) -> std::optional<std::string> {
        return reporting ? read_and_report(options, command_line) : std::string();
      }};
  return run_command(command, argc, argv);
}

}  // namespace commbench
