// A run stopped by SIGINT/SIGTERM once every rank knows of it (runner/interruption.hpp
// records the signal and the measurement loop agrees on it). In core so that every layer
// that keeps results can stop cleanly on it: the validation plan keeps the checks made
// so far, as the sweep keeps its rows.
#pragma once

#include "commbench/core/error.hpp"

namespace commbench {

// Exit code 128 + signal, as shells report a process ended by that signal (130 for
// SIGINT, 143 for SIGTERM).
class Interrupted : public Error {
 public:
  explicit Interrupted(int signal_number);
  int signal_number() const { return signal_; }

 private:
  int signal_;
};

// "SIGINT", "SIGTERM", or "a signal".
const char* interruption_signal_name(int signal_number);

}  // namespace commbench
