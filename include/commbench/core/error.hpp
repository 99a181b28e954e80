// Errors carry the process exit code they map to, so every boundary (CLI, backend,
// checks, watchdog) reports failures the same documented way.
#pragma once

#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>

namespace commbench {

// Messages quote what users typed (flags, file names, environment variables); control
// characters in those must not break the one-line contract of an error, or let input
// forge extra lines in logs. They are escaped: "\n", "\t", "\x1b".
inline std::string one_line(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (byte < 0x20 || byte == 0x7f) {
      char escaped[5];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out;
}

// Input quoted in a message is cut short, so an error stays one readable line even when
// the offending value is a megabyte long.
inline std::string excerpt(std::string_view text, std::size_t limit = 64) {
  if (text.size() <= limit) return std::string(text);
  return std::string(text.substr(0, limit)) + "...";
}

enum class ExitCode : int {
  ok = 0,
  check_failed = 1,  // a correctness check or threshold failed (reported after the sweep)
  usage = 2,         // bad flag, bad input file, impossible request
  backend = 3,       // MPI/NCCL/CUDA runtime error
  timeout = 4,       // a step did not complete within --timeout (the watchdog ends the process)
};

class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& message) : std::runtime_error(one_line(message)), code_(code) {}
  ExitCode exit_code() const noexcept { return code_; }
  // Every rank of the job has learnt of this error (collective_try agreed on it), so no
  // rank waits in a collective for this one and the job need not be aborted.
  bool agreed() const noexcept { return agreed_; }
  void mark_agreed() noexcept { agreed_ = true; }

 private:
  ExitCode code_;
  bool agreed_ = false;
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

}  // namespace commbench

namespace commbench {

// Thrown on the ranks that did not detect a failure themselves: the rank that did has
// printed the message, so these exit with the same code and print nothing.
class ReportedByAnotherRank : public Error {
 public:
  explicit ReportedByAnotherRank(ExitCode code) : Error(code, "") {}
};

}  // namespace commbench
