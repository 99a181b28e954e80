#include "commbench/cli/job_command.hpp"

#include <cstdio>
#include <memory>

#include "commbench/core/error.hpp"
#include "commbench/runner/interruption.hpp"

namespace commbench {

void print_command_error(const char* program, const std::string& message) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s: error: %s\n", program, message.c_str());
  std::fflush(stderr);
}

int run_in_job_runtime(const char* program, int& argc, char**& argv, bool handle_interruptions,
                       const std::function<int(JobRuntime&)>& body) {
  std::unique_ptr<JobRuntime> runtime;
  try {
    runtime = start_job_runtime(&argc, &argv);
    // After MPI_Init: some MPI libraries install their own handlers there.
    if (handle_interruptions) install_interruption_handlers();
  } catch (const Error& e) {
    print_command_error(program, e.what());
    return static_cast<int>(ExitCode::backend);
  }
  try {
    return body(*runtime);
  } catch (const ReportedByAnotherRank& e) {
    return static_cast<int>(e.exit_code());
  } catch (const Error& e) {
    print_command_error(program, e.what());
    // A backend error the other ranks do not know of may leave them waiting in a
    // collective for this rank: the job is ended. One they agreed on ends cleanly.
    if (e.exit_code() == ExitCode::backend && !e.agreed()) runtime->abort_job(static_cast<int>(ExitCode::backend));
    return static_cast<int>(e.exit_code());
  } catch (const std::exception& e) {
    print_command_error(program, std::string("internal error: ") + e.what());
    runtime->abort_job(static_cast<int>(ExitCode::backend));
  }
  return static_cast<int>(ExitCode::backend);  // not reached: abort_job does not return
}

}  // namespace commbench
