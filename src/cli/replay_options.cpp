#include "replay_options.hpp"

#include <optional>

#include <fmt/format.h>

#include "command_line_parser.hpp"
#include "commbench/cli/flag_values.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/number_text.hpp"
#include "pattern_flag_parsers.hpp"

namespace commbench {

namespace {

// The first of bench-patterns' flags given (--dtype aside: it also types the calls a
// report gives counts for), or none.
std::optional<std::string> model_flag_given(const CLI::App& app) {
  for (const CLI::Option* option : app.get_options()) {
    const std::string& group = option->get_group();
    const bool model_flag =
        group == kModelGroup || group == kLayoutGroup || group == kFrameworkGroup || group == kComputeGroup;
    if (model_flag && option->count() > 0 && option->get_name() != "--dtype") return option->get_name();
  }
  return std::nullopt;
}

}  // namespace

ReplayInputRequest input_request(const ReplayOptions& options) {
  ReplayInputRequest request;
  request.paths = options.traces;
  request.ranks = options.ranks;
  request.schedule_wanted = !options.dump_path.empty();
  request.export_limit_seconds = options.export_limit_seconds;
  // bench-patterns' --dtype, the job's type, also sizes the calls a report gives only counts for.
  if (options.pattern.dtype) request.element_type = trace_type_name(*options.pattern.dtype);
  return request;
}

bool describes_a_model(const PatternRequest& flags) {
  return flags.pattern || !flags.preset.empty() || flags.layers || !flags.deepspeed_config.empty() ||
         !flags.schedule.empty();
}

std::string first_model_flag(const PatternRequest& flags) {
  if (flags.pattern) return "--pattern";
  if (!flags.preset.empty()) return "--preset";
  if (flags.layers) return "--layers";
  return flags.deepspeed_config.empty() ? "--schedule" : "--deepspeed-config";
}

void add_replay_options(CLI::App& app, ReplayOptions& options) {
  // Checked in validate, not by CLI11: --version and --help need no trace.
  app.add_option("TRACE", options.traces,
                 "A rank's torch.profiler trace (.json or .json.gz), or a folder of them, one file per rank; Nsight "
                 "Systems reports (nsys export's .sqlite or .sqlite.gz; a .nsys-rep with nsys on the PATH); or "
                 "DeepSpeed's comms log (any other name: log_summary()'s table or verbose comms_logger lines, "
                 "with --ranks)");
  add_parsed_option(
      app, "--ranks", options.ranks,
      [](const std::string& text, const char* flag) {
        const std::uint64_t ranks = parse_count(text, flag, 1);
        if (ranks > (1u << 24)) throw UsageError(fmt::format("{}: {} ranks is more than any job has", flag, text));
        return static_cast<int>(ranks);
      },
      "The job's world size, for a DeepSpeed comms log (the log does not say it; traces do)", "N");
  add_parsed_option(
      app, "--export-timeout", options.export_limit_seconds, parse_timeout_seconds,
      "Seconds one `nsys export` of a .nsys-rep may take before it is stopped and the run ends with "
      "exit 4; 0 disables",
      "SECONDS")
      ->default_str(significant_text(options.export_limit_seconds));
  add_parsed_option(
      app, "--fabric", options.fabric_path, non_empty_file_name,
      "A bench-collectives CSV or JSON file from the same cluster: each class of calls against the busbw it measured "
      "at that operation, size and group",
      "FILE");
  add_parsed_option(
      app, "--dump-schedule", options.dump_path, non_empty_file_name,
      "Write the traced step as bench-patterns' schedule (JSON lines; the time between calls as compute) for "
      "bench-patterns --schedule: run it on this cluster, --predict it, --trace it",
      "FILE");
  add_parsed_option(
      app, "--topology", options.topology_path, non_empty_file_name,
      "A node of the job's cluster as bench-topology --json wrote it: its NICs between nodes and their rate, for "
      "the job's bytes per NIC per second",
      "FILE");
  // bench-patterns' flags: with --pattern, --preset, --layers, --deepspeed-config or
  // --schedule the job's step is compared with the one they describe.
  add_pattern_flags(app, options.pattern);
  // Two of bench-patterns' flags mean more, or other, here.
  app.get_option("--dtype")->description(
      "The model's parameter type, for the step to compare with (default bfloat16); also the type of the calls an "
      "Nsight Systems report gives only element counts for (default float32)");
  app.get_option("--schedule")
      ->description(
          "A step in --dump-schedule's JSON lines (bench-patterns or bench-replay --dump-schedule) to compare the "
          "job's traced step with, instead of a modelled pattern");
  add_result_file_options(app, options.job.files,
                          "CSV: a 'collective' line per class of calls and a 'rank' line per trace (with --replay: "
                          "the replayed step's lines, as bench-patterns writes them)",
                          "JSON (commbench.replay/3): the same records, the files read and the verdict (with "
                          "--replay: the replayed step's document, commbench.patterns/2)");
  app.add_flag("--replay", options.replay,
               "Run the traced step on this job's ranks (under mpirun or srun, as many ranks as the trace's job): "
               "every rank's calls in order, sizes and the recorded gaps as stand-in compute, reported as "
               "bench-patterns reports a step");
  add_backend_option(app, options.job.backend);
  add_timeout_option(app, options.job.timeout_seconds, "one replayed step");
  add_measurement_options(app, options.measurement, "Replayed steps measured (with --replay)",
                          "Replayed steps run before the measured ones (with --replay)");
  app.add_flag("--measure-fabric", options.measure_fabric,
               "Measure each of the job's collectives (operation, type, size) on this job's ranks, under mpirun or "
               "srun, and hold the job's calls against those figures, as --fabric does against a sweep");
  add_parsed_option(
      app, "--trace", options.trace_path, non_empty_file_name,
      "With --replay: every rank's last replayed step as a Chrome/Perfetto trace", "FILE");
}

void validate_replay_options(const CLI::App& app, ReplayOptions& options) {
  if (options.traces.empty()) throw UsageError("TRACE: name at least one trace file or folder (see --help)");
  options.iterations_given = app.count("--iters") > 0;
  const std::optional<std::string> model_flag = model_flag_given(app);
  const bool model = describes_a_model(options.pattern) || model_flag;
  if (options.measure_fabric) {
    if (options.replay) throw UsageError("--measure-fabric: not with --replay (run them one after the other)");
    if (!options.fabric_path.empty())
      throw UsageError("--measure-fabric: measures the fabric here; --fabric reads it from a file (give one)");
    if (!options.dump_path.empty() || model)
      throw UsageError(
          "--measure-fabric: measures the fabric; --dump-schedule and the model flags read the traces without a job "
          "(run bench-replay again without --measure-fabric)");
    if (!options.trace_path.empty()) throw UsageError("--trace: only with --replay (a run of the traced step)");
    return;
  }
  if (!options.replay) {
    // Alone, bench-patterns' flags describe no step, and would be passed over in silence.
    if (model_flag && !describes_a_model(options.pattern))
      throw UsageError(
          fmt::format("{}: describes the step to compare the job's with; give --pattern, --preset, "
                      "--layers, --deepspeed-config or --schedule too",
                      *model_flag));
    if (!options.trace_path.empty()) throw UsageError("--trace: only with --replay (a run of the traced step)");
    for (const char* flag : {"--backend", "--timeout", "--iters", "--warmup"})
      if (app.count(flag) > 0)
        throw UsageError(fmt::format("{}: only with --replay or --measure-fabric (they run a job)", flag));
    return;
  }
  if (!options.fabric_path.empty() || !options.dump_path.empty() || model)
    throw UsageError(
        "--replay: runs the traced step; --fabric, --dump-schedule and the model flags read it without a job (run "
        "bench-replay again without --replay)");
}

}  // namespace commbench
