#include "commbench/cli/job_watch.hpp"

#include <unistd.h>

#include <thread>

#include <fmt/format.h>

#include "commbench/runner/stall_hook.hpp"

namespace commbench {
namespace {

std::string this_host() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

}  // namespace

JobWatch::JobWatch(const std::string& program, double timeout_seconds)
    : timeout_seconds_(timeout_seconds),
      watchdog_(timeout_seconds, program, fmt::format("rank {} (host {})", launcher_rank_or_zero(), this_host()),
                [this](const std::string& message) {
                  {
                    std::lock_guard lock(backend_mutex_);
                    if (backend_ != nullptr) backend_->abort();
                    if (expiry_report_) expiry_report_();
                  }
                  Watchdog::print_and_exit(message, std::chrono::milliseconds(linger_ms_.load()));
                }) {
  watchdog_.attach_arrivals(&arrivals_);
  // Rank 0 names the missing ranks from the first step on (the arrival census); the
  // others wait a moment after their own line so the launcher does not end rank 0 first.
  if (launcher_rank_or_zero() != 0) set_linger(std::chrono::milliseconds(3000));
}

void JobWatch::set_backend(Backend* backend) {
  std::lock_guard lock(backend_mutex_);
  backend_ = backend;
}

void JobWatch::set_expiry_report(std::function<void()> report) {
  std::lock_guard lock(backend_mutex_);
  expiry_report_ = std::move(report);
}

void JobWatch::adopt_heartbeat(std::unique_ptr<HeartbeatChannel> channel, std::vector<std::string> labels) {
  watchdog_.attach_heartbeat(nullptr, {});  // before the old channel goes
  heartbeat_ = std::move(channel);
  watchdog_.attach_heartbeat(heartbeat_.get(), std::move(labels));
}

void JobWatch::say_results_written() {
  if (heartbeat_) heartbeat_->say_results_written();
}

void JobWatch::wait_for_results_written(std::chrono::milliseconds within) {
  if (!heartbeat_) {
    std::this_thread::sleep_for(within);
    return;
  }
  heartbeat_->wait_for_results_written(within);
}

bool JobWatch::results_written_said() {
  return heartbeat_ && heartbeat_->wait_for_results_written(std::chrono::milliseconds(0));
}

void JobWatch::relabel_ranks(std::vector<std::string> labels) {
  watchdog_.attach_heartbeat(heartbeat_.get(), std::move(labels));
}

}  // namespace commbench
