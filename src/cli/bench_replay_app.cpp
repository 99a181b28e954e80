#include "commbench/cli/bench_replay_app.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "command_line_parser.hpp"
#include "commbench/cli/command_shell.hpp"
#include "commbench/cli/flag_values.hpp"
#include "commbench/analysis/replay_cause.hpp"
#include "commbench/analysis/sweep_cost_model.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/input_file.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/core/size.hpp"
#include "commbench/pattern/schedule_json.hpp"
#include "commbench/replay/deepspeed_comms_log.hpp"
#include "commbench/replay/nsys_report_reader.hpp"
#include "commbench/replay/pytorch_trace_reader.hpp"
#include "commbench/replay/trace_summary.hpp"
#include "commbench/report/output_file.hpp"
#include "commbench/report/reporter_set.hpp"
#include "commbench/topology/topology_json.hpp"
#include "commbench/analysis/optional_json.hpp"
#include "pattern_flag_parsers.hpp"
#include "pattern_flags.hpp"
#include "pattern_run.hpp"
#include "commbench/analysis/replay_fabric.hpp"
#include "commbench/replay/trace_inputs.hpp"
#include "commbench/analysis/replay_measured_fabric.hpp"
#include "commbench/analysis/replay_model_comparison.hpp"
#include "commbench/analysis/replay_nic_load.hpp"
#include "replay_options.hpp"
#include "commbench/analysis/replay_records.hpp"
#include "commbench/analysis/replay_run.hpp"
#include "commbench/analysis/replay_run_comparison.hpp"
#include "commbench/analysis/replay_schedule.hpp"
#include "commbench/analysis/distributed_trace_reading.hpp"
#include "commbench/backend/collective_try.hpp"
#include "commbench/core/launcher_env.hpp"

namespace commbench {

namespace {

constexpr const char* kProgram = "bench-replay";
constexpr const char* kReplaySchema = "commbench.replay/3";

std::string fabric_basis(const ReplayOptions& options) { return "--fabric " + options.fabric_path; }

// nlohmann::json, not ordered_json: these sections' keys are in name order.
nlohmann::json fabric_json(const FabricComparison* fabric) {
  if (fabric == nullptr) return nullptr;
  nlohmann::json figures;
  figures["basis"] = fabric->basis;
  figures["job_seconds"] = fabric->job_seconds;
  figures["fabric_seconds"] = fabric->fabric_seconds;
  figures["verdict"] = fabric->verdict;
  figures["cause"] = fabric->cause;
  return figures;
}

nlohmann::json steps_json(const std::vector<StepSummary>& steps) {
  nlohmann::json list = nlohmann::json::array();
  for (const StepSummary& step : steps)
    list.push_back({{"step", step.number},
                    {"calls", step.calls},
                    {"bytes", step.bytes_known ? nlohmann::json(step.bytes) : nlohmann::json()},
                    {"step_seconds", step.step_seconds},
                    {"communication_seconds", optional_json(step.communication_seconds)},
                    {"wait_seconds", step.wait_seconds}});
  return list;
}

// What a reading is held against, each absent (null) when not asked for.
struct ReplayComparisons {
  const FabricComparison* fabric = nullptr;
  const ModelComparison* model = nullptr;
  const JobNicLoad* nics = nullptr;
  const RunComparison* runs = nullptr;  // --before
};

nlohmann::json nics_json(const JobNicLoad* nics) {
  if (nics == nullptr) return nullptr;
  return nlohmann::json{{"text", nics->text},
                        {"crosses_nodes", nics->crosses_nodes},
                        {"bytes_per_node", nics->bytes_per_node},
                        {"seconds", nics->seconds},
                        {"over_steps", nics->over_steps},
                        {"nics", nics->nics},
                        {"nic_gbps", optional_json(nics->nic_gbps)},
                        {"gbps_per_nic", optional_json(nics->gbps_per_nic)}};
}

void write_replay_files(const ReplayOptions& options, const TraceSummary& summary, ReplayComparisons against,
                        RunContext context, const std::vector<std::string>& files) {
  const FabricComparison* fabric = against.fabric;
  const ModelComparison* model = against.model;
  if (options.job.files.csv_path.empty() && options.job.files.json_path.empty()) return;
  context.record_kind = "collective";
  context.mixed_record_kinds = {"collective", "rank"};
  ReporterSet reporters = ReporterSet::open(file_outputs(options.job.files));
  reporters.begin(context);
  add_replay_records([&](const Record& record) { reporters.add_record(record); }, summary, fabric);
  RunSummary end;
  end.rows = summary.classes.size() + summary.ranks.size();
  end.sections = {{"traces", files},
                  {"world_size", summary.world_size},
                  {"backend", summary.backend},
                  {"calls_per_rank", summary.calls},
                  {"steps", steps_json(summary.steps)},
                  {"straggler", optional_json(summary.straggler)},
                  {"verdict", summary.verdict},
                  {"fabric", fabric_json(fabric)},
                  {"model", model ? model_comparison_json(*model) : nlohmann::ordered_json()},
                  {"nics", nics_json(against.nics)},
                  {"before", against.runs ? run_comparison_json(*against.runs) : nlohmann::ordered_json()},
                  {"exit_code", 0}};
  reporters.finish(end);
}

// The traced step of rank 0 against the step the model flags describe for the job's ranks.
ModelComparison compare_model(const ReplayOptions& options, const ReadInput& input, const RankSchedule& job,
                              std::vector<std::string>& notes) {
  const int world = input.summary.world_size;
  const PatternConfig config = resolve_pattern_config(options.pattern, world, std::max(1, world / input.nodes), notes);
  return compare_with_model(job, build_schedule(config, 0), fmt::format("{}, {} ranks", pattern_name(config), world));
}

// The traced job's hosts, where every rank's trace was read and names its host; a
// DeepSpeed log, or some of the ranks, leave them unknown (0 nodes, no hosts).
void set_traced_hosts(const TraceSummary& summary, RunContext& context) {
  if (summary.ranks.size() != static_cast<std::size_t>(summary.world_size)) return;
  std::vector<std::string> hosts(summary.ranks.size());
  for (const RankTraceSummary& rank : summary.ranks) {
    if (rank.host.empty() || rank.rank < 0 || rank.rank >= summary.world_size) return;
    hosts[static_cast<std::size_t>(rank.rank)] = rank.host;
  }
  context.nodes = static_cast<int>(std::set<std::string>(hosts.begin(), hosts.end()).size());
  context.rank_hosts = std::move(hosts);
}

// The report of what was read, against the fabric when `fabric` holds a comparison:
// printed, and written to the result files; the last line is returned.
std::string report_reading(const ReplayOptions& options, const std::string& command_line, ReadInput input,
                           const std::optional<FabricComparison>& fabric, const std::optional<NodeTopology>& topology,
                           std::chrono::steady_clock::time_point started) {
  const TraceSummary& summary = input.summary;
  const std::vector<std::string>& files = input.files;
  std::vector<std::string>& notes = input.notes;
  const bool compare = describes_a_model(options.pattern);
  std::optional<RunComparison> runs;
  if (!options.before_path.empty()) {
    ReplayInputRequest earlier = input_request(options);
    earlier.paths = {options.before_path};
    TraceSummary before;
    try {
      before = read_traces(earlier).summary;
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("--before: {}", e.what()));
    }
    runs = compare_runs(before, summary, options.before_path);
  }
  std::vector<RankSchedule> schedules;
  if (compare || !options.dump_path.empty()) {
    if (input.traces.empty())
      throw UsageError(
          "--pattern, --preset: a modelled step is compared with the job's traces; a comms log does not "
          "say the calls' order");
    std::vector<std::string> extraction_notes;
    const ScheduleUse use = options.dump_path.empty() ? ScheduleUse{first_model_flag(options.pattern), false}
                                                      : ScheduleUse{"--dump-schedule", true};
    schedules = extract_schedules(input.traces, extraction_notes, use);
    if (!options.dump_path.empty()) notes.insert(notes.end(), extraction_notes.begin(), extraction_notes.end());
  }
  std::optional<ModelComparison> model;
  if (compare) model = compare_model(options, input, schedules.front(), notes);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  print_replay_report(summary, fabric ? &*fabric : nullptr);
  std::optional<JobNicLoad> nics;
  if (fabric || topology) nics = job_nic_load(summary, input.nodes, topology);
  if (nics) fmt::print("nics: {}\n", nics->text);
  if (model) print_model_comparison(*model);
  if (runs) print_run_comparison(*runs);
  for (const std::string& note : notes) fmt::print("# note: {}\n", note);
  RunContext context = context_without_job(kReplaySchema, kProgram, command_line,
                                           {{"traces", std::to_string(files.size())}, {"format", input.format}});
  context.ranks = summary.world_size;
  set_traced_hosts(summary, context);
  context.notes = notes;
  if (fabric) context.notes.insert(context.notes.end(), fabric->notes.begin(), fabric->notes.end());
  write_replay_files(options, summary,
                     {fabric ? &*fabric : nullptr, model ? &*model : nullptr, nics ? &*nics : nullptr,
                      runs ? &*runs : nullptr},
                     std::move(context), files);
  // Written last, as the result files are: a run refused before this leaves none of them.
  if (!options.dump_path.empty()) {
    std::string lines;
    for (const RankSchedule& schedule : schedules) lines += schedule_json_lines(schedule, true);
    write_file_atomically(options.dump_path, lines, "--dump-schedule");
  }
  const char* kind = input.format == "torch.profiler" ? "trace" : input.format == "nsys" ? "report" : "log";
  return fmt::format("# {} {}{} read in {} s", files.size(), kind, files.size() == 1 ? "" : "s",
                     significant_text(seconds, 3));
}

// --topology: read before anything is written, so that a bad file leaves no result behind.
// bench-topology's JSON holds every node it probed; the first stands for all (a training
// job's nodes are alike).
std::optional<NodeTopology> topology_of(const ReplayOptions& options) {
  if (options.topology_path.empty()) return std::nullopt;
  const std::string where = "--topology " + options.topology_path;
  const nlohmann::json document =
      nlohmann::json::parse(read_input_file(options.topology_path, "--topology"), nullptr, false);
  if (document.is_discarded() || !document.is_object() || !document.contains("nodes") ||
      !document["nodes"].is_array() || document["nodes"].empty())
    throw UsageError(fmt::format("{}: not a file bench-topology --json wrote (no \"nodes\")", where));
  return topology_from_json_text(document["nodes"].front().dump(), where);
}

// What was read, against --fabric where given: printed and written; the last line is returned.
std::string report_with_fabric(const ReplayOptions& options, const std::string& command_line, ReadInput input,
                               const std::optional<NodeTopology>& topology,
                               std::chrono::steady_clock::time_point started) {
  std::optional<FabricComparison> fabric;
  if (!options.fabric_path.empty()) {
    const SweepCostModel sweep(read_input_file(options.fabric_path, fabric_basis(options)), fabric_basis(options));
    fabric = judge_against_fabric(input.summary, sweep, input.nodes);
    fabric->basis = fabric_basis(options);
  }
  return report_reading(options, command_line, std::move(input), fabric, topology, started);
}

std::string read_and_report(const ReplayOptions& options, const std::string& command_line) {
  const auto started = std::chrono::steady_clock::now();
  const std::optional<NodeTopology> topology = topology_of(options);
  return report_with_fabric(options, command_line, read_traces(input_request(options)), topology, started);
}

// Whether a launcher (mpirun, srun) started several processes, which then divide the
// traces: one process, under a launcher or not, reads them as it always has.
bool divided_between_processes() {
  const std::optional<int> size = launcher_size([](const char* name) { return std::getenv(name); });
  return size && *size > 1;
}

// Under mpirun or srun: the job's ranks divide the traces between them, and the reporting
// rank reports what one process would have, in the one process's order of checks. Every
// rank leaves each step alike (collective_try); no step has a deadline, as a reading by one
// process has none (-T is --replay's and --measure-fabric's).
int read_over_ranks_and_report(const ReplayOptions& options, JobSession& session) {
  const auto started = std::chrono::steady_clock::now();
  const std::string command_line = session.run_context({}).command_line;
  std::optional<NodeTopology> topology;
  collective_try(session.world(), [&] {
    if (session.reporting()) topology = topology_of(options);
  });
  DividedReading reading;
  collective_try(session.world(), [&] { reading = read_traces_over(session.world(), input_request(options)); });
  collective_try(session.world(), [&] {
    if (!session.reporting()) return;
    fmt::print("{}\n", report_with_fabric(options, command_line, std::move(reading.input), topology, started));
    if (const std::optional<ReadingShare>& share = reading.slowest)
      fmt::print("# divided over {} ranks: the slowest, rank {}, read {} of {} in {} s ({} s of CPU)\n",
                 session.world().size(), share->rank, count_text(share->files, "file"), format_size(share->bytes),
                 significant_text(share->seconds, 3), significant_text(share->cpu_seconds, 3));
  });
  return 0;
}

// --measure-fabric: every rank reads the job (they decide alike), the job's collectives
// are measured on this job's ranks, and the reporting rank reports the reading against them.
int measure_fabric_and_report(const ReplayOptions& options, JobSession& session) {
  const auto started = std::chrono::steady_clock::now();
  const std::optional<NodeTopology> topology = topology_of(options);
  ReadInput input;
  session.step("reading the traces", [&] { input = read_traces(input_request(options)); });
  // On one process a collective is a copy: no fabric is in it to measure.
  if (session.world().size() < 2)
    throw UsageError(fmt::format(
        "--measure-fabric: measures the job's collectives between this job's ranks, and this job has one; run it "
        "under mpirun or srun on 2 or more ranks (the traced job had {})",
        input.summary.world_size));
  Backend& backend = session.create_backend(BackendRequest{options.job.backend});
  const RunContext context = session.run_context({});
  StoppingCriteria stopping;
  if (options.iterations_given) stopping.fixed_iterations = options.measurement.iterations;
  std::optional<MeasuredFabric> measured;
  session.step("measuring the job's collectives on this fabric", [&] {
    measured.emplace(input.summary, backend, session.watchdog(), stopping, options.measurement.warmup);
  });
  FabricComparison fabric = judge_against_fabric(input.summary, *measured, input.nodes);
  fabric.basis = measured->basis();
  if (!session.reporting()) return 0;
  const std::size_t files = input.files.size();
  report_reading(options, context.command_line, std::move(input), fabric, topology, started);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  fmt::print("# {} file{} read and {} case{} measured here in {} s\n", files, files == 1 ? "" : "s", measured->cases(),
             measured->cases() == 1 ? "" : "s", significant_text(seconds, 3));
  return 0;
}

// --replay: every rank reads the traces (they decide alike), the reporting rank prints the
// job's own table, and the traced step runs on this job's ranks.
int replay_traced_step(const ReplayOptions& options, JobSession& session) {
  ReadInput input;
  std::vector<RankSchedule> schedules;
  std::vector<std::string> notes;
  session.step("reading the traces", [&] {
    input = read_traces(input_request(options));
    if (input.traces.empty())
      throw UsageError("--replay: needs the job's traces; a DeepSpeed comms log does not say the calls' order");
    schedules = extract_schedules(input.traces, notes, {"--replay", true});
  });
  notes.insert(notes.begin(), input.notes.begin(), input.notes.end());
  const PatternConfig config = lay_out_traced_step(schedules, session);
  if (session.reporting()) {
    print_replay_report(input.summary, nullptr);
    const std::size_t files = input.files.size();
    const int ranks = session.world().size();
    fmt::print("# replaying the traced step ({} file{}) on this job's {} rank{}\n", files, files == 1 ? "" : "s", ranks,
               ranks == 1 ? "" : "s");
    std::fflush(stdout);
  }
  PatternRunOptions run;
  run.job = options.job;
  run.measurement = options.measurement;
  run.trace_path = options.trace_path;
  return run_resolved_pattern(kProgram, run, session, config, notes, [&](const PatternReport& report) {
    fmt::print("{}", replayed_beside_job(input.summary, report));
  });
}

}  // namespace

int run_bench_replay(int argc, char** argv) {
  const Command<ReplayOptions> command{
      .name = kProgram,
      .description = "bench-replay: a training job's own traces (torch.profiler, one file per rank), Nsight Systems "
                     "reports or DeepSpeed comms log read as the collectives it ran: sizes, times, bandwidth, exposed "
                     "communication, and which rank the others waited for.",
      .schema = kReplaySchema,
      .profile_category = ProfileCategory::patterns,
      .add_options = add_replay_options,
      .validate = [](const CLI::App& app, ReplayOptions& options) { validate_replay_options(app, options); },
      // Reading traces needs no job (without_job does all of it) unless a launcher started
      // several processes to divide them; --replay and --measure-fabric run one.
      .run =
          [](const ReplayOptions& options, JobSession& session) {
            if (options.replay) return replay_traced_step(options, session);
            if (options.measure_fabric) return measure_fabric_and_report(options, session);
            return read_over_ranks_and_report(options, session);
          },
      .replaced_files =
          [](const ReplayOptions& options) {
            return NamedPaths{{options.dump_path, "--dump-schedule"}, {options.trace_path, "--trace"}};
          },
      .without_job = [](const ReplayOptions& options, bool reporting,
                        const std::string& command_line) -> std::optional<std::string> {
        if (options.replay || options.measure_fabric || divided_between_processes()) return std::nullopt;
        return reporting ? read_and_report(options, command_line) : std::string();
      },
      .read_files =
          [](const ReplayOptions& options) {
            NamedPaths read{{options.fabric_path, "--fabric"},
                            {options.topology_path, "--topology"},
                            {options.pattern.deepspeed_config, "--deepspeed-config"},
                            {options.pattern.schedule, "--schedule"}};
            for (std::string& path : files_read_from(options.traces)) read.emplace_back(std::move(path), "TRACE");
            return read;
          },
  };
  return run_command(command, argc, argv);
}

}  // namespace commbench
