#include "commbench/cli/job_command.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include <fmt/format.h>

#include "commbench/core/error.hpp"
#include "commbench/core/launcher_env.hpp"
#include "commbench/core/steady_allocator.hpp"
#include "commbench/report/provenance.hpp"
#include "commbench/runner/interruption.hpp"

namespace commbench {
namespace {

constexpr std::chrono::seconds kMpiStartSeconds{5};

// Runs the command's body and turns what it throws into an exit code. An internal error
// (or a backend error the other ranks do not know of) ends the whole job instead.
int exit_code_of(const char* program, JobRuntime& runtime, const std::function<int()>& body) {
  try {
    return body();
  } catch (const ReportedByAnotherRank& e) {
    return static_cast<int>(e.exit_code());
  } catch (const Error& e) {
    print_command_error(program, e.what());
    // A backend error the other ranks do not know of may leave them waiting in a
    // collective for this rank: the job is ended. One they agreed on ends cleanly.
    if (e.exit_code() == ExitCode::backend && !e.agreed()) runtime.abort_job(static_cast<int>(ExitCode::backend));
    return static_cast<int>(e.exit_code());
  } catch (const std::exception& e) {
    print_command_error(program, std::string("internal error: ") + e.what());
    runtime.abort_job(static_cast<int>(ExitCode::backend));
  }
  return static_cast<int>(ExitCode::backend);  // not reached: abort_job does not return
}

}  // namespace

void print_command_error(const char* program, const std::string& message) {
  std::fflush(stdout);
  // Called from error handlers: a stderr that cannot be written (closed, full) leaves the
  // exit code to tell, rather than an exception out of a handler.
  try {
    fmt::print(stderr, "{}: error: {}\n", program, message);
  } catch (const std::exception&) {
  }
  std::fflush(stderr);
}

bool is_reporting_process() {
  const std::optional<int> launcher = launcher_rank([](const char* name) { return std::getenv(name); });
  return !launcher || *launcher == 0;
}

int run_in_job_runtime(const char* program, int& argc, char**& argv, bool handle_interruptions, double timeout_seconds,
                       const std::string& command_line, const std::function<int(JobStart&)>& body) {
  // Before MPI starts, so the library's own allocations follow it too.
  const std::string allocator = configure_allocator_from_environment();
  JobWatch watch(program, timeout_seconds);
  std::unique_ptr<JobRuntime> runtime;
  try {
    // A rank stopped before MPI_Init returns holds every other rank in it. The step gets
    // at least kMpiStartSeconds whatever -T says: ranks that end while Open MPI's mpirun
    // is still starting the others can hang mpirun itself.
    // Every waiting rank names itself then; rank 0 waits as long as the others do, so the
    // launcher does not end a rank that started a little later before its line is out.
    auto guard = watch.watchdog().guard("starting MPI (MPI_Init)", kMpiStartSeconds);
    const bool reporting = is_reporting_process();
    if (reporting) watch.set_linger(std::chrono::milliseconds(3000));
    runtime = start_job_runtime(&argc, &argv);
    if (reporting) watch.set_linger(std::chrono::milliseconds(0));
    // After MPI_Init: some MPI libraries install their own handlers there.
    if (handle_interruptions) install_interruption_handlers();
  } catch (const Error& e) {
    print_command_error(program, e.what());
    return static_cast<int>(ExitCode::backend);
  }
  JobStart start{program, command_line, allocator, *runtime, watch};
  const int exit_code = exit_code_of(program, *runtime, [&] { return body(start); });
  // MPI_Finalize waits for every rank too.
  auto guard = watch.watchdog().guard("finalizing MPI");
  runtime.reset();
  return exit_code;
}

int run_command(const char* program, int argc, char** argv, bool handle_interruptions,
                const std::function<std::optional<std::string>()>& prepare,
                const std::function<double()>& timeout_seconds, const std::function<int(JobStart&)>& body) {
  const bool prints_before_mpi = is_reporting_process();
  const std::string command_line = quoted_command_line(argc, argv);
  std::optional<std::string> text_instead;
  try {
    text_instead = prepare();
  } catch (const Error& e) {
    // Work done before any job (reading input, a helper program it runs) ends with its own code.
    if (prints_before_mpi) print_command_error(program, e.what());
    return static_cast<int>(e.exit_code());
  }
  if (text_instead) {
    // Help or a version into a pipe closed early: the reader had what it wanted.
    if (prints_before_mpi) try {
        fmt::print("{}\n", *text_instead);
      } catch (const std::exception&) {
      }
    return 0;
  }
  return run_in_job_runtime(program, argc, argv, handle_interruptions, timeout_seconds(), command_line, body);
}

}  // namespace commbench
