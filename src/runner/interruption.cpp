#include "commbench/runner/interruption.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

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
