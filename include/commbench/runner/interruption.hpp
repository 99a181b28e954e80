// SIGINT/SIGTERM (Slurm sends SIGTERM at the time limit) as a request to stop cleanly:
// the handler only records the signal; the runner polls it between batches and the
// ranks agree on it, so they all stop at the same point and reporters can finish.
#pragma once

#include <functional>

#include "commbench/core/interrupted.hpp"

namespace commbench {

// Installs the handlers (once). Returns false when they could not be installed.
bool install_interruption_handlers();
// The signal received so far, or 0.
int pending_interruption();
// pending_interruption() as the ranks agree on it by their maximum: SIGINT outranks
// SIGTERM, because a Ctrl-C at the terminal reaches the ranks as SIGINT and, through
// mpirun, as SIGTERM too, in either order; the user's signal is the one to report.
int interruption_agreement_key();
// The signal an agreed key (the ranks' maximum) stands for; 0 for none.
int signal_of_agreement_key(int key);
// For tests: forget a recorded signal.
void clear_interruption();

// Sleeps `seconds`, in short slices, returning early once SIGINT/SIGTERM is pending (a
// soak's wait between intervals must not hold a signal for a whole interval).
void sleep_unless_interrupted(double seconds);

// The runner throws Interrupted (core/interrupted.hpp) once every rank knows of one.

// Runs `body` and returns the signal of an Interrupted it throws, or 0. For work in a
// sub-group: its ranks agree on a signal among themselves, release the group with the
// others, and only then does the whole job agree to stop.
int signal_that_stopped(const std::function<void()>& body);

}  // namespace commbench
