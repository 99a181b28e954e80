// What every command's main does around its work: one-line errors, the job runtime (MPI
// when built with it), and errors mapped to the documented exit codes.
#pragma once

#include <functional>
#include <string>

#include "commbench/backend/job_runtime.hpp"

namespace commbench {

// "PROGRAM: error: MESSAGE" on stderr, after whatever stdout holds.
void print_command_error(const char* program, const std::string& message);

// Starts the job runtime and runs `body` in it. An Error prints its one line and returns
// its exit code (a backend error also ends the other ranks, which may be waiting in a
// collective for this one); ReportedByAnotherRank returns silently; anything else is an
// internal error that ends the job with exit 3.
int run_in_job_runtime(const char* program, int& argc, char**& argv, bool handle_interruptions,
                       const std::function<int(JobRuntime&)>& body);

}  // namespace commbench
