#include "commbench/runner/interruption.hpp"

#include <csignal>

namespace commbench {
namespace {

volatile std::sig_atomic_t g_signal = 0;

extern "C" void record_signal(int signal_number) {
  if (g_signal == 0) g_signal = signal_number;
}

}  // namespace

bool install_interruption_handlers() {
  struct sigaction action {};
  action.sa_handler = record_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // MPI and file I/O carry on; the runner stops between batches
  return sigaction(SIGINT, &action, nullptr) == 0 && sigaction(SIGTERM, &action, nullptr) == 0;
}

int pending_interruption() { return g_signal; }

void clear_interruption() { g_signal = 0; }

}  // namespace commbench
