// What every command's main does around its work: one-line errors, the job runtime (MPI
// when built with it) started and finished under the job's watchdog, and errors mapped to
// the documented exit codes.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "commbench/backend/job_runtime.hpp"
#include "commbench/cli/job_watch.hpp"

namespace commbench {

// "PROGRAM: error: MESSAGE" on stderr, after whatever stdout holds.
void print_command_error(const char* program, const std::string& message);

// What a command's body gets: the started job, its command line (shell-quoted, for
// provenance) and the watchdog that has guarded it since before MPI started.
struct JobStart {
  std::string program;
  std::string command_line;
  std::string allocator;  // configure_allocator_from_environment(): "steady" or "default"
  JobRuntime& runtime;
  JobWatch& watch;
};

// Starts the job runtime under a JobWatch of `timeout_seconds` and runs `body` in it;
// finalizes the runtime under the same watch. An Error prints its one line and returns
// its exit code (a backend error also ends the other ranks, which may be waiting in a
// collective for this one); ReportedByAnotherRank returns silently; anything else is an
// internal error that ends the job with exit 3.
int run_in_job_runtime(const char* program, int& argc, char**& argv, bool handle_interruptions, double timeout_seconds,
                       const std::string& command_line, const std::function<int(JobStart&)>& body);

// Whether this process is the launcher's rank 0 (or runs without a launcher): the one
// that prints before MPI starts and, after it, writes the result files.
bool is_reporting_process();

// The whole life of a command. `prepare` runs before MPI: it parses the flags and checks
// what can be checked alone, keeping what it parsed, and returns text to print instead of
// running (help, version) or nullopt to run. Its UsageError is printed by the launcher's
// rank 0 only and returns 2, so it must be one every rank finds alike (the flags): a check
// whose answer depends on the node, such as whether an output file exists, belongs only
// to the reporting process (is_reporting_process()), which alone writes the files; on
// another node it would end that rank silently and the job without a reason. Then
// `timeout_seconds()` (read from what prepare parsed) arms the job's watchdog, and `body`
// runs in the job runtime.
int run_command(const char* program, int argc, char** argv, bool handle_interruptions,
                const std::function<std::optional<std::string>()>& prepare,
                const std::function<double()>& timeout_seconds, const std::function<int(JobStart&)>& body);

}  // namespace commbench
