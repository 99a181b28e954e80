#include "commbench/cli/command_shell.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>
#include <string_view>
#include <utility>

#include "command_line_parser.hpp"
#include "commbench/cli/flag_values.hpp"
#include "commbench/core/build_info.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/name_lookup.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/report/output_file.hpp"
#include "commbench/report/provenance.hpp"

namespace commbench {

namespace {

using NamedBackend = detail::NamedValue<std::string_view>;
constexpr std::array kBackendNames{NamedBackend{"auto", "auto"}, NamedBackend{"mpi", "mpi"},
                                   NamedBackend{"nccl", "nccl"}};

}  // namespace

CLI::Option* add_backend_option(CLI::App& app, std::string& backend) {
  const std::string names = detail::listed_names<std::string_view>(kBackendNames);
  return add_parsed_option(
             app, "--backend", backend,
             [names](const std::string& text, const char* flag) {
               return std::string(detail::lookup_name<std::string_view>(kBackendNames, text, flag, names));
             },
             "One of: " + names + " (auto: nccl when GPUs and NCCL are present)", "NAME")
      ->default_str(backend);
}

CLI::Option* add_timeout_option(CLI::App& app, double& seconds, const std::string& what) {
  return add_parsed_option(
             app, "-T,--timeout", seconds, parse_timeout_seconds,
             "Seconds " + what + " may take before the run ends with exit 4; 0 disables", "SECONDS")
      ->default_str(significant_text(seconds));
}

void add_result_file_options(CLI::App& app, ResultFiles& files, const std::string& csv_description,
                             const std::string& json_description) {
  add_parsed_option(app, "--csv", files.csv_path, non_empty_file_name, csv_description, "FILE");
  add_parsed_option(app, "--json", files.json_path, non_empty_file_name, json_description, "FILE");
  app.add_flag("--force", files.force, "Overwrite existing result files");
}

void add_job_options(CLI::App& app, JobOptions& job, const std::string& timeout_what,
                     const std::string& csv_description, const std::string& json_description) {
  add_backend_option(app, job.backend);
  add_timeout_option(app, job.timeout_seconds, timeout_what);
  add_result_file_options(app, job.files, csv_description, json_description);
}

void add_measurement_options(CLI::App& app, MeasurementOptions& measurement, const std::string& iterations_what,
                             const std::string& warmup_what) {
  add_parsed_option(app, "-n,--iters", measurement.iterations, count_at_least(1), iterations_what, "N")
      ->default_str(std::to_string(measurement.iterations));
  add_parsed_option(app, "-w,--warmup,--warmup-iters", measurement.warmup, count_at_least(0), warmup_what, "N")
      ->default_str(std::to_string(measurement.warmup));
}

RunContext context_without_job(const char* schema, const char* program, const std::string& command_line,
                               std::vector<std::pair<std::string, std::string>> settings) {
  RunContext context;
  context.schema = schema;
  context.program = program;
  context.version = commbench::version();
  context.commit = git_commit();
  context.command_line = command_line;
  context.started_at = utc_timestamp();
  context.settings = std::move(settings);
  context.environment = relevant_environment();
  return context;
}

OutputRequest file_outputs(const ResultFiles& files, OutputFormat console) {
  return OutputRequest{console, files.csv_path, files.json_path, files.force};
}

namespace shell_detail {

std::optional<std::string> parse(CLI::App& app, int argc, char** argv, const char* program,
                                 const std::string& version_suffix) {
  const CommandLineOutcome outcome = parse_command_line(app, argc, argv, program);
  if (outcome.request == CommandLineRequest::run) return std::nullopt;
  if (outcome.request == CommandLineRequest::version) return outcome.text + version_suffix;
  return outcome.text;
}

void prepare_result_files(const ResultFiles& files, const std::vector<std::pair<std::string, const char*>>& replaced) {
  if (!files.csv_path.empty()) check_output_path(files.csv_path, "--csv", files.force, OutputKind::streamed);
  if (!files.json_path.empty()) check_output_path(files.json_path, "--json", files.force, OutputKind::replaced);
  for (const auto& [path, flag] : replaced)
    if (!path.empty()) check_output_path(path, flag, files.force, OutputKind::replaced);
  // The JSON's folder first: a JSON refused there leaves no CSV folder behind. A CSV
  // written whole (in `replaced`) needs its folder; one that streams into an existing
  // device or FIFO needs only to write to it.
  std::vector<std::pair<std::string, const char*>> whole{{files.json_path, "--json"}};
  whole.insert(whole.end(), replaced.begin(), replaced.end());
  for (const auto& [path, flag] : whole)
    if (!path.empty()) create_parent_directories(path, flag);
  if (!files.csv_path.empty()) prepare_streamed_output(files.csv_path, "--csv");
}

void check_result_files_apart(const ResultFiles& files,
                              const std::vector<std::pair<std::string, const char*>>& replaced,
                              const std::vector<std::pair<std::string, const char*>>& read) {
  std::vector<std::pair<std::string, const char*>> written{{files.csv_path, "--csv"}, {files.json_path, "--json"}};
  // A command may list --csv or --json among the files it replaces: each flag counts once.
  for (const auto& entry : replaced)
    if (std::none_of(written.begin(), written.end(),
                     [&](const auto& w) { return std::string_view(w.second) == entry.second; }))
      written.push_back(entry);
  for (std::size_t i = 0; i < written.size(); ++i) {
    const auto& [path, flag] = written[i];
    for (std::size_t j = 0; j < i; ++j) check_distinct_paths(written[j].first, written[j].second, path, flag);
    for (const auto& [input, input_flag] : read)
      if (!path.empty() && !input.empty() && same_file(path, input))
        throw UsageError(fmt::format("{} {}: a file this run reads ({} {}); name another result file", flag, path,
                                     input_flag, input));
  }
}

void check_files_exist(const std::vector<std::pair<std::string, const char*>>& read) {
  for (const auto& [path, flag] : read) {
    std::error_code ec;
    if (path.empty() || std::filesystem::exists(path, ec)) continue;
    const std::string label = flag[0] == '-' ? fmt::format("{} {}", flag, path) : path;
    throw UsageError(fmt::format("{}: cannot read ({})", label, std::strerror(ENOENT)));
  }
}

}  // namespace shell_detail

}  // namespace commbench
