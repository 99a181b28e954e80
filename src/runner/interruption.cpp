#include "commbench/runner/interruption.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include <csignal>

#include <pthread.h>
#include <unistd.h>

namespace commbench {
namespace {

volatile std::sig_atomic_t g_signal = 0;

extern "C" void record_signal(int signal_number) {
  if (g_signal == 0) g_signal = signal_number;
}

// The kernel hands a process-directed signal to the main thread when it can take it, and a
// main thread inside a long system call (MPI's single-copy transfer of a large buffer, a
// page-faulting allocation) takes it only when the call returns: hundreds of ms under
// load, longer than a one-second stop allows. So the main thread blocks SIGINT/SIGTERM,
// every thread it starts from here on inherits that, and a thread that only sleeps takes
// them at once.
void start_signal_listener() {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  std::thread([stop_signals] {
    pthread_sigmask(SIG_UNBLOCK, &stop_signals, nullptr);
    for (;;) pause();
  }).detach();
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
}

}  // namespace

bool install_interruption_handlers() {
  static const bool installed = [] {
    struct sigaction action {};
    action.sa_handler = record_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;  // MPI and file I/O carry on; the runner stops between batches
    if (sigaction(SIGINT, &action, nullptr) != 0 || sigaction(SIGTERM, &action, nullptr) != 0) return false;
    start_signal_listener();
    return true;
  }();
  return installed;
}

int pending_interruption() { return g_signal; }

namespace {
constexpr int kSigintKey = 1 << 16;  // above every signal number
}  // namespace

int interruption_agreement_key() { return g_signal == SIGINT ? kSigintKey : g_signal; }

int signal_of_agreement_key(int key) { return key == kSigintKey ? SIGINT : key; }

void clear_interruption() { g_signal = 0; }

void sleep_unless_interrupted(double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (pending_interruption() == 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::min(std::chrono::duration<double>(0.1),
                                         std::chrono::duration<double>(until - std::chrono::steady_clock::now())));
}

int signal_that_stopped(const std::function<void()>& body) {
  try {
    body();
  } catch (const Interrupted& stop) {
    return stop.signal_number();
  }
  return 0;
}

}  // namespace commbench
