#include "pattern_run.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commbench/backend/typed_exchange.hpp"
#include "commbench/cli/command_shell.hpp"
#include "commbench/cli/job_command.hpp"
#include "commbench/analysis/nic_watch.hpp"
#include "commbench/analysis/pattern_bandwidth.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/pattern/pattern_executor.hpp"
#include "commbench/pattern/pattern_measurement.hpp"
#include "commbench/pattern/pattern_report.hpp"
#include "commbench/pattern/schedule_json.hpp"
#include "commbench/pattern/step_trace.hpp"
#include "commbench/pattern/tuning_space.hpp"
#include "commbench/report/output_file.hpp"
#include "commbench/report/scheduler_job.hpp"
#include "commbench/runner/interruption.hpp"
#include "commbench/analysis/pattern_results.hpp"
#include "commbench/analysis/pattern_tuning.hpp"

namespace commbench {

std::vector<std::pair<std::string, std::string>> describe(const PatternRunOptions& options, const PatternConfig& config,
                                                          const Backend* backend) {
  // A tuning's trials run --tune-steps and --tune-warmup, not -n and -w; a job's backend is
  // the one that ran, not "auto".
  const std::uint64_t steps = options.tune ? options.tune_request.steps : options.measurement.iterations;
  const std::uint64_t warmup = options.tune ? options.tune_request.warmup : options.measurement.warmup;
  return {{"pattern", pattern_name(config)},
          {"model", config.model.name},
          {"parameters", significant_text(config.model.parameters)},
          {"layers", std::to_string(config.model.layers)},
          {"tp", std::to_string(config.layout.tensor)},
          {"pp", std::to_string(config.layout.pipeline)},
          {"dp", std::to_string(config.layout.data)},
          {"ep", std::to_string(config.layout.expert)},
          {"steps", std::to_string(steps)},
          {"warmup", std::to_string(warmup)},
          {"backend", backend ? std::string(backend->name()) : options.job.backend}};
}

namespace {

// A port below this fraction of its rails' median is flagged, as bench-collectives'
// --nic-fraction default.
constexpr double kNicFraction = 0.7;

// Each node's rails over the measured steps, with the keys of bench-collectives' `nic`
// records: node, nic, rdma, tx_bytes, rx_bytes, seconds, gbps, peak_gbps, flagged, note.
nlohmann::ordered_json nics_json(const std::vector<NodeNic>& nics) {
  const auto optional = [](const auto& value) {
    return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json();
  };
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const NodeNic& nic : nics) {
    if (!nic.rail) continue;
    const NicTraffic& t = nic.traffic;
    const bool known = t.known() && nic.seconds > 0;
    nlohmann::ordered_json entry;
    entry["node"] = nic.node;
    entry["nic"] = nic_label(t.device, t.port, t.rdma);
    entry["rdma"] = t.rdma;
    entry["tx_bytes"] = optional(t.tx_bytes);
    entry["rx_bytes"] = optional(t.rx_bytes);
    entry["seconds"] = nic.seconds;
    entry["gbps"] = known ? nlohmann::ordered_json(nic.bytes_per_second() / 1e9) : nlohmann::ordered_json();
    entry["peak_gbps"] = nic.peak_bytes_per_second > 0 ? nlohmann::ordered_json(nic.peak_bytes_per_second / 1e9)
                                                       : nlohmann::ordered_json();
    entry["flagged"] = !nic.flag.empty();
    entry["note"] = nic.flag.empty() ? t.note : t.note.empty() ? nic.flag : nic.flag + "; " + t.note;
    list.push_back(entry);
  }
  return list;
}

// The JSON's `nics`, before exit_code, which ends every document.
void add_nics_section(RunSummary& summary, const std::vector<NodeNic>& nics) {
  const auto end = std::find_if(summary.sections.begin(), summary.sections.end(),
                                [](const auto& section) { return section.first == "exit_code"; });
  summary.sections.insert(end, {"nics", nics_json(nics)});
}

// --trace: every rank's last measured step, gathered on the reporting rank.
void write_measured_trace(const std::string& path, const PatternConfig& config, const RankSchedule& schedule,
                          const std::vector<ItemTiming>& last_timings, JobSession& session) {
  Bootstrap& world = session.world();
  session.step("writing the trace", [&] {
    const std::string own = rank_trace_events(schedule, last_timings, world.rank(),
                                              fmt::format("rank {} (host {})", world.rank(), world.hostname()));
    const std::vector<std::string> fragments = all_gather_as(world, own);
    if (session.reporting())
      write_file_atomically(path, chrome_trace(fragments, pattern_name(config) + " step, last measured"), "--trace");
  });
}

// The timed steps and their report: the files open before the first step, so a signal
// or a stall in them still leaves files that say how far the run got.
int run_measured_steps(const PatternRunOptions& options, JobSession& session,
                       const PatternConfig& config, const RankSchedule& schedule, std::unique_ptr<PatternGroups> groups,
                       const PatternBandwidthModel& model, RunContext context,
                       const std::function<void(const PatternReport&)>& after_report) {
  Bootstrap& world = session.world();
  const std::size_t notes_in_files = context.notes.size();

  PatternMeasurement measured;
  ComputeCalibration calibration;
  std::vector<ItemTiming> last_timings;
  // Across nodes, each node's NICs are sampled over the measured steps (their warm-up
  // included, as bench-collectives' cases): what they moved through each port, and how
  // fast at its busiest.
  NicWatch nic_watch(world, world.node_count() > 1, kNicFraction);
  std::vector<NodeNic> nics;
  int exit_code = 0;
  // A signal before the first timed step stops the run with no records: the groups are
  // released first, then the shell closes the files (complete: false).
  const int signal_before_steps = signal_that_stopped([&] {
    PatternStepWorkload workload(*groups, schedule, pattern_name(config) + " step");
    // A signal during the timed steps keeps those measured (interrupted_by); one before
    // the first is Interrupted, with nothing to report.
    nic_watch.start_case();
    measured = measure_pattern(workload, world, options.measurement.iterations, options.measurement.warmup,
                               &session.watchdog(), &session.phases());
    {
      auto guard = session.watchdog().guard("gathering the NIC counters of the measured steps");
      nics = nic_watch.finish("the measured steps");
    }
    if (measured.interrupted_by != 0) {
      exit_code = 128 + measured.interrupted_by;
      context.notes.push_back(fmt::format("interrupted by {} after {} of {} timed steps",
                                          interruption_signal_name(measured.interrupted_by), measured.steps.size(),
                                          options.measurement.iterations));
    }
    calibration = workload.calibration();
    last_timings = workload.last_timings();
    context.notes.insert(context.notes.end(), workload.notes().begin(), workload.notes().end());
    if (!workload.compute_occupies().empty())
      context.notes.push_back("compute stand-in: " + workload.compute_occupies());
  });
  {
    auto guard = session.watchdog().guard("releasing the pattern's groups");
    groups.reset();
  }
  if (signal_before_steps != 0) throw Interrupted(signal_before_steps);
  if (!options.trace_path.empty()) write_measured_trace(options.trace_path, config, schedule, last_timings, session);
  const PatternReport report = build_pattern_report(measured.step, median_sizes(schedule), model.bandwidths, model.nic);
  if (session.reporting()) {
    fmt::print("{}", slurm_comment_line(context));
    print_report(config, measured, report, context.notes);
    if (nic_watch.enabled()) fmt::print("{}", nic_watch.rails_table("over the measured steps and their warm-up"));
    if (after_report) after_report(report);
  }
  add_pattern_records([&](const Record& record) { session.add_record(record); }, measured, report);
  RunSummary summary =
      measured_pattern_summary(context, measured, report, bubble_of(config, report.step), calibration, exit_code);
  if (nic_watch.enabled()) add_nics_section(summary, nics);
  summary.notes.assign(context.notes.begin() + static_cast<std::ptrdiff_t>(notes_in_files), context.notes.end());
  session.finish_results(summary);
  if (measured.interrupted_by != 0) session.say_interrupted(Interrupted(measured.interrupted_by));
  return exit_code;
}

}  // namespace

int run_resolved_pattern(const char* /*program*/, const PatternRunOptions& options, JobSession& session,
                         const PatternConfig& config, const std::vector<std::string>& notes,
                         const std::function<void(const PatternReport&)>& after_report) {
  Bootstrap& world = session.world();
  RankSchedule schedule;
  session.step("building the schedule", [&] { schedule = build_schedule(config, world.rank()); });
  if (!options.dump_path.empty()) {
    session.step("writing the schedule", [&] {
      if (!session.reporting()) return;
      std::string lines;
      for (int rank = 0; rank < world.size(); ++rank) lines += schedule_json_lines(build_schedule(config, rank), true);
      write_file_atomically(options.dump_path, lines, "--dump-schedule");
    });
  }
  if (options.dry_run) {
    // Silence would not tell a dry run that passed from one that did nothing.
    if (session.reporting())
      fmt::print("# dry run: {} ({}) checked on {}: {} of rank 0 written to {} with every rank's; nothing was run\n",
                 pattern_name(config), config.model.name, count_text(world.size(), "rank"),
                 count_text(schedule.steps.size(), "step"), options.dump_path);
    return 0;
  }

  // The backend by name alone: the NCCL-only settings are bench-collectives' flags.
  Backend& backend = session.create_backend(BackendRequest{options.job.backend});
  if (options.tune) {
    session.step("listing the knobs to tune", [&] { tuning_space(config); });
    RunContext context = session.run_context(describe(options, config, &backend));
    context.notes.insert(context.notes.end(), notes.begin(), notes.end());
    // The trials' files open before the first trial, so a stop in any trial leaves them
    // whole with the trials decided before it.
    session.begin_results(options.tune_request.files, tuning_files_context(context, config));
    const TuningFiles files{.add_trial = [&](const Record& trial) { session.add_record(trial); },
                            .finish = [&](const RunSummary& summary) { session.finish_results(summary); }};
    return run_pattern_tuning(session, backend, config, context, options.tune_request, files);
  }
  // The files open before the groups are split and their buffers allocated, so a signal
  // in any phase leaves files that say how far the run got.
  RunContext context = session.run_context(describe(options, config, &backend));
  context.schema = kPatternsSchema;
  context.notes.insert(context.notes.end(), notes.begin(), notes.end());
  prepare_pattern_context(context);
  session.open_outputs(file_outputs(options.job.files));
  session.begin_results(context);
  if (session.reporting())
    print_pattern_header(config, world.size(), options.measurement.iterations, options.measurement.warmup);
  session.begin_phase("allocation");
  std::unique_ptr<PatternGroups> groups;
  session.step("splitting the pattern's groups",
               [&] { groups = std::make_unique<PatternGroups>(backend, config.layout, schedule); });
  PatternBandwidthModel model;
  session.step("modelling the groups' bandwidth", [&] { model = model_pattern_bandwidth(*groups); });
  return run_measured_steps(options, session, config, schedule, std::move(groups), model, std::move(context),
                            after_report);
}

}  // namespace commbench
