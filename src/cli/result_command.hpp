// The whole life of a command whose results are a --csv and a --json file (ResultFiles)
// and whose options say how long one step may take (timeout_seconds): bench-p2p and
// bench-validate. Parse before MPI, refuse to replace result files without --force on the
// reporting process, then run the body in the job (run_command).
#pragma once

#include <optional>
#include <string>

#include "command_line_parser.hpp"
#include "commbench/cli/job_command.hpp"

namespace commbench {

// What a command's parser returns: the options to run with, or text to print instead
// (help, version).
template <typename Options>
struct ParsedCommandLine {
  std::optional<Options> options;
  std::string text_to_print;
};

// `parse(argc, argv)` returns a ParsedCommandLine<Options>; `body(options, start)` runs
// in the job and returns the exit code.
template <typename Options, typename Parse, typename Body>
int run_result_command(const char* program, int argc, char** argv, Parse parse, Body body) {
  ParsedCommandLine<Options> parsed;
  const auto prepare = [&]() -> std::optional<std::string> {
    parsed = parse(argc, argv);
    if (!parsed.options) return parsed.text_to_print;
    if (is_reporting_process()) prepare_result_files(parsed.options->files);
    return std::nullopt;
  };
  return run_command(
      program, argc, argv, true, prepare, [&] { return parsed.options->timeout_seconds; },
      [&](JobStart& start) { return body(*parsed.options, start); });
}

}  // namespace commbench
