// The one command shell. A command is its name, a description, its options (its own and
// the shared groups it takes), a validate step and run(session); the shell does the rest:
// --help and --version, one-line errors with exit 2, result files refused before the job
// on the reporting process, the job runtime under its watchdog, and the job session. See
// examples/bench_groups.cpp for a whole command and docs/architecture.md, "How to add a
// command".
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "commbench/backend/backend_factory.hpp"
#include "commbench/cli/flag_values.hpp"
#include "commbench/cli/job_command.hpp"
#include "commbench/cli/job_session.hpp"
#include "commbench/core/profile_range.hpp"
#include "commbench/report/provenance.hpp"
#include "commbench/report/reporter_set.hpp"

namespace commbench {

// --csv FILE, --json FILE, --force: the result files.
struct ResultFiles {
  std::string csv_path, json_path;
  bool force = false;
};

// The options of the job every command runs: --backend, -T/--timeout and the result files.
struct JobOptions {
  std::string backend = "auto";
  double timeout_seconds = 300;
  ResultFiles files;
};

// How long each measurement runs: -n/--iters and -w/--warmup.
struct MeasurementOptions {
  std::uint64_t iterations = 20;
  std::uint64_t warmup = 2;
};

// The shared option groups, declared once so every command spells a flag alike.
// --backend auto|mpi|nccl.
CLI::Option* add_backend_option(CLI::App& app, std::string& backend);
// -T/--timeout SECONDS (0 disables): "Seconds `what` may take before the run ends with exit 4".
CLI::Option* add_timeout_option(CLI::App& app, double& seconds, const std::string& what);
// --csv, --json (non-empty names) and --force.
void add_result_file_options(CLI::App& app, ResultFiles& files, const std::string& csv_description,
                             const std::string& json_description);
// --backend, -T/--timeout (for `timeout_what`) and the result files.
void add_job_options(CLI::App& app, JobOptions& job, const std::string& timeout_what,
                     const std::string& csv_description, const std::string& json_description);
// -n/--iters N (at least 1) and -w/--warmup N (also spelled --warmup-iters, as
// bench-collectives names it), their defaults from `measurement`.
void add_measurement_options(CLI::App& app, MeasurementOptions& measurement, const std::string& iterations_what,
                             const std::string& warmup_what);

// The files as the session's reporters write them: `console` on stdout (none for a
// command that prints its own report), the CSV streamed, the JSON replaced at the end.
OutputRequest file_outputs(const ResultFiles& files, OutputFormat console = OutputFormat::none);

// What the files of work done without a job say of the run (a prediction, traces read):
// the program, its build, the command line, the settings and environment; no backend, MPI
// or hosts.
RunContext context_without_job(const char* schema, const char* program, const std::string& command_line,
                               std::vector<std::pair<std::string, std::string>> settings);

// Files a command names, each with the flag that names it.
using NamedPaths = std::vector<std::pair<std::string, const char*>>;

// A command, declared with named fields (`.name = ..., .run = ...`). `Options` holds a
// `JobOptions job` member.
template <typename Options>
struct Command {
  const char* name;         // "bench-p2p": the program and its errors' prefix
  const char* description;  // the first line of --help
  const char* schema;       // its JSON document's layout, "commbench.p2p/1"
  ProfileCategory profile_category;
  // Declares the command's flags on `app` into `options` (the shared groups included).
  std::function<void(CLI::App& app, Options& options)> add_options;
  // After parsing, before the job: what the flags cannot say alone, as a UsageError
  // naming the flag. Must decide alike on every rank (no node's files).
  std::function<void(const CLI::App& app, Options& options)> validate = {};
  // In the job: the work and its exit code. Its rows and records go through the session
  // (begin_results opens the files and prints the header before the long work); the shell
  // finishes results the command leaves open, and an Interrupted that leaves `run` as
  // complete: false files with what was measured.
  std::function<int(const Options& options, JobSession& session)> run;
  // --version also lists the backends of this build.
  bool version_lists_backends = false;
  // Files the run writes whole and renames into place (a trace, a schedule; the CSV of a
  // command that does not stream it), refused before the job; empty for none.
  std::function<NamedPaths(const Options& options)> replaced_files = {};
  // Work that needs no job, such as a prediction: nullopt runs the job; text ends the
  // command with exit 0, printed by the reporting process. Called before MPI starts on
  // every process (`reporting` says which one this is), after the files are checked, with
  // the command line as provenance records it.
  std::function<std::optional<std::string>(const Options& options, bool reporting, const std::string& command_line)>
      without_job = {};
  // Files the run reads, with the flag that names each (a folder's files listed, not the
  // folder): each must exist, and no result file may be one of them.
  std::function<NamedPaths(const Options& options)> read_files = {};
};

namespace shell_detail {
// Parses `argv` with `app`: the text to print instead of running (help, version), or
// nullopt to run; `version_suffix` follows the version. UsageError for bad flags.
std::optional<std::string> parse(CLI::App& app, int argc, char** argv, const char* program,
                                 const std::string& version_suffix);
// Refuses existing result files (without --force) on the reporting process only: --csv as
// a streamed file (a FIFO or /dev/stdout will do), --json and `replaced` as files renamed
// into place (not a device or a FIFO). Every path is checked before any folder is made.
void prepare_result_files(const ResultFiles& files, const std::vector<std::pair<std::string, const char*>>& replaced);
// Refuses two result files (--csv, --json, `replaced`) that are one file, and, where `read`
// is given, a result file that is a file the run reads: writing it would destroy an input.
void check_result_files_apart(const ResultFiles& files,
                              const std::vector<std::pair<std::string, const char*>>& replaced,
                              const std::vector<std::pair<std::string, const char*>>& read);
// Refuses a file the run would read that is not there, naming it and its flag ("--fabric
// x.csv: cannot read (No such file or directory)"; a positional, such as TRACE, by its
// path alone), before validate can ask for what the file would have said.
void check_files_exist(const std::vector<std::pair<std::string, const char*>>& read);
}  // namespace shell_detail

template <typename Options>
int run_command(const Command<Options>& command, int argc, char** argv) {
  Options options;
  const auto prepare = [&]() -> std::optional<std::string> {
    CLI::App app{command.description};
    app.name(command.name);
    command.add_options(app, options);
    const std::string version_suffix = command.version_lists_backends ? "\nbackends: " + available_backends() : "";
    if (std::optional<std::string> text = shell_detail::parse(app, argc, argv, command.name, version_suffix))
      return text;
    // A file not there is said first: validate could otherwise ask for what it would hold.
    // Files are the reporting node's (a site file reaches the other ranks from it), so the
    // reporting process looks.
    const bool reporting = is_reporting_process();
    const NamedPaths read = command.read_files && reporting ? command.read_files(options) : NamedPaths{};
    shell_detail::check_files_exist(read);
    if (command.validate) command.validate(app, options);
    const NamedPaths replaced = command.replaced_files ? command.replaced_files(options) : NamedPaths{};
    shell_detail::check_result_files_apart(options.job.files, replaced, {});
    if (reporting) {
      // Whether a result file is one read depends on this node's disk: the reporting
      // process decides.
      shell_detail::check_result_files_apart(options.job.files, replaced, read);
      shell_detail::prepare_result_files(options.job.files, replaced);
    }
    if (command.without_job) return command.without_job(options, reporting, quoted_command_line(argc, argv));
    return std::nullopt;
  };
  return run_command(
      command.name, argc, argv, true, prepare, [&] { return options.job.timeout_seconds; },
      [&](JobStart& start) {
        set_profile_category(command.profile_category);
        JobSession session(start, command.schema);
        return session.run([&] { return command.run(options, session); });
      });
}

}  // namespace commbench
