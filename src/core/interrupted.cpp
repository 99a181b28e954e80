#include "commbench/core/interrupted.hpp"

#include <csignal>
#include <string>

namespace commbench {

const char* interruption_signal_name(int signal_number) {
  if (signal_number == SIGHUP) return "SIGHUP";
  return signal_number == SIGINT ? "SIGINT" : signal_number == SIGTERM ? "SIGTERM" : "a signal";
}

Interrupted::Interrupted(int signal_number)
    : Error(
          static_cast<ExitCode>(128 + signal_number),
          std::string("interrupted by ") + interruption_signal_name(signal_number) + "; rows measured so far are kept"),
      signal_(signal_number) {}

}  // namespace commbench
