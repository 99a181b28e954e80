#include "commbench/runner/phase_progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>

#include <fmt/format.h>

#include "commbench/core/number_text.hpp"

namespace commbench {

PhaseProgress::PhaseProgress(std::FILE* out, bool terminal, bool phase_lines)
    : out_(out), terminal_(terminal), phase_lines_(phase_lines) {}

std::unique_ptr<PhaseProgress> PhaseProgress::for_stderr(bool printing) {
  // A batch job's log that stays silent through a long warm-up looks like a hang, so a long
  // phase says how far it got there too; a short one says nothing, so a script reading
  // stderr still gets an error line alone.
  const bool terminal = isatty(fileno(stderr)) == 1;
  const char* asked_for = std::getenv("COMMBENCH_PROGRESS");
  const std::string_view asked = asked_for == nullptr ? std::string_view() : std::string_view(asked_for);
  if (!printing || asked == "0") return std::make_unique<PhaseProgress>(nullptr, false);
  return std::make_unique<PhaseProgress>(stderr, terminal, terminal || asked == "1");
}

void PhaseProgress::begin_phase(const std::string& name, std::uint64_t total, const std::string& unit) {
  std::lock_guard lock(mutex_);
  // A phase said again (the command's, then its measurement's) goes on: one line, one clock.
  if (name == name_ && total == total_ && unit == unit_) return;
  name_ = name;
  unit_ = unit;
  total_ = total;
  done_ = 0;
  started_ = Clock::now();
  printed_progress_ = false;
  if (out_ == nullptr || !phase_lines_) return;
  // The console's own lines go to stdout: flushed first, so a log holds them in order.
  std::fflush(stdout);
  std::string line = total > 0 ? fmt::format("# {}: {}", name, count_text(total, unit)) : fmt::format("# {}", name);
  if (line_open_) line = "\n" + line;
  line_open_ = false;
  std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
}

void PhaseProgress::advance_phase(std::uint64_t done) {
  std::lock_guard lock(mutex_);
  done_ = done;
}

std::string PhaseProgress::where_text() const {
  if (total_ == 0) return done_ == 0 ? std::string() : fmt::format("{} {}", unit_, done_);
  return fmt::format("{} {} of {}", unit_, std::min(done_ + 1, total_), total_);
}

std::string PhaseProgress::progress_text(Clock::time_point now) const {
  const double elapsed = std::chrono::duration<double>(now - started_).count();
  std::string text = fmt::format("# {}: ", name_);
  const std::string where = where_text();
  if (!where.empty()) text += where + ", ";
  text += fmt::format("{} elapsed", duration_text(elapsed));
  // The estimate from the steps done so far: none before the first is done.
  if (total_ > 0 && done_ > 0 && done_ < total_) {
    const double left = elapsed / static_cast<double>(done_) * static_cast<double>(total_ - done_);
    text += fmt::format(", about {} left", duration_text(left));
  }
  return text;
}

void PhaseProgress::tick(Clock::time_point now) {
  std::lock_guard lock(mutex_);
  const auto first = phase_lines_ ? kFirstProgress : kQuietLogEvery;
  if (out_ == nullptr || name_.empty() || now - started_ < first) return;
  const auto every = terminal_ ? kTerminalEvery : phase_lines_ ? kLogEvery : kQuietLogEvery;
  if (printed_progress_ && now - last_printed_ < every) return;
  printed_progress_ = true;
  last_printed_ = now;
  const std::string text = progress_text(now);
  if (terminal_) {
    // Rewritten in place: blanks cover what a longer line before left behind.
    const std::size_t width = std::max(open_width_, text.size());
    std::fprintf(out_, "\r%-*s", static_cast<int>(width), text.c_str());
    open_width_ = text.size();
    line_open_ = true;
  } else {
    std::fprintf(out_, "%s\n", text.c_str());
  }
  std::fflush(out_);
}

void PhaseProgress::settle() {
  std::lock_guard lock(mutex_);
  if (out_ == nullptr || !line_open_) return;
  std::fputc('\n', out_);
  std::fflush(out_);
  line_open_ = false;
  open_width_ = 0;
}

std::string PhaseProgress::phase() const {
  std::lock_guard lock(mutex_);
  return name_;
}

std::string PhaseProgress::phase_with_progress() const {
  std::lock_guard lock(mutex_);
  const std::string where = where_text();
  return where.empty() ? name_ : fmt::format("{} ({})", name_, where);
}

}  // namespace commbench
