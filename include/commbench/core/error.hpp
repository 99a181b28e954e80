// Errors carry the process exit code they map to, so every boundary (CLI, backend,
// checks, watchdog) reports failures the same documented way.
#pragma once

#include <stdexcept>
#include <string>

namespace commbench {

enum class ExitCode : int {
  ok = 0,
  check_failed = 1,   // a correctness check or threshold failed
  usage = 2,          // bad flag, bad input file, impossible request
  backend = 3,        // MPI/NCCL/CUDA runtime error
  timeout = 4,        // an operation did not complete within --timeout
};

class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ExitCode exit_code() const noexcept { return code_; }

 private:
  ExitCode code_;
};

// Bad input from the user: message names the flag or file.
class UsageError : public Error {
 public:
  explicit UsageError(const std::string& message) : Error(ExitCode::usage, message) {}
};

class BackendError : public Error {
 public:
  explicit BackendError(const std::string& message) : Error(ExitCode::backend, message) {}
};

class CheckFailed : public Error {
 public:
  explicit CheckFailed(const std::string& message) : Error(ExitCode::check_failed, message) {}
};

class TimeoutError : public Error {
 public:
  explicit TimeoutError(const std::string& message) : Error(ExitCode::timeout, message) {}
};

}  // namespace commbench

namespace commbench {

// Thrown on the ranks that did not detect a failure themselves: the rank that did has
// printed the message, so these exit with the same code and print nothing.
class ReportedByAnotherRank : public Error {
 public:
  explicit ReportedByAnotherRank(ExitCode code) : Error(code, "") {}
};

}  // namespace commbench
