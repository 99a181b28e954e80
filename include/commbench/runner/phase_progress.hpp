// The phases of a run as the user follows them: a line as each phase begins (allocation,
// warm-up, measurement, a tuning trial...) and, once a phase has lasted a few seconds, a
// progress line (step k of n, elapsed, an estimate of what is left). On a terminal the
// progress line is rewritten in place; in a log (not a terminal) it is a plain line now
// and then, so a log stays readable, and a phase's first line is its first progress line. The phase in progress is also what an interrupted
// run names in its files and on the console.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>

namespace commbench {

// What work inside a job says of its phases: measurement and set-up code take this, the
// shell's session provides it.
class PhaseListener {
 public:
  virtual ~PhaseListener() = default;
  // A phase begins: `name` ("warm-up"), `total` its steps when known (0: unknown),
  // `unit` what a step is ("step", "case", "trial").
  virtual void begin_phase(const std::string& name, std::uint64_t total = 0, const std::string& unit = "step") = 0;
  // `done` steps of the phase in progress are done.
  virtual void advance_phase(std::uint64_t done) = 0;
};

class PhaseProgress final : public PhaseListener {
 public:
  using Clock = std::chrono::steady_clock;
  // `out` receives the lines (null: none are printed, the phase is still kept);
  // `terminal` rewrites the progress line in place; `phase_lines` prints a line as each
  // phase begins, not only progress lines in a long one.
  PhaseProgress(std::FILE* out, bool terminal, bool phase_lines = true);
  // stderr on the reporting rank (`printing`): on a terminal every line, the progress line
  // rewritten in place; in a log the progress lines of a phase past half a minute only, as
  // plain lines, so a short run's stderr stays an error line alone; COMMBENCH_PROGRESS=1
  // adds the phase lines to a log (and progress past 3 s), COMMBENCH_PROGRESS=0 silences both.
  static std::unique_ptr<PhaseProgress> for_stderr(bool printing);

  void begin_phase(const std::string& name, std::uint64_t total = 0, const std::string& unit = "step") override;
  void advance_phase(std::uint64_t done) override;
  // Prints the progress line when one is due at `now`: past kFirstProgress into a phase,
  // then every kTerminalEvery on a terminal or kLogEvery in a log; without phase lines,
  // past kQuietLogEvery and then as often. Called by a clock thread.
  void tick(Clock::time_point now);
  // Ends a progress line left in place on a terminal, so what follows starts a line.
  void settle();

  // The phase in progress ("" before the first), and the same with how far it got:
  // "warm-up (step 2 of 8)".
  std::string phase() const;
  std::string phase_with_progress() const;

  static constexpr std::chrono::milliseconds kFirstProgress{3000};
  static constexpr std::chrono::milliseconds kTerminalEvery{250};
  static constexpr std::chrono::milliseconds kLogEvery{10000};
  // A log that asked for no phase lines: a line once a phase has lasted half a minute, then
  // each half minute, so only work long enough to look hung says how far it got.
  static constexpr std::chrono::milliseconds kQuietLogEvery{30000};

 private:
  std::string progress_text(Clock::time_point now) const;  // caller holds mutex_
  std::string where_text() const;                          // caller holds mutex_

  std::FILE* out_;
  bool terminal_;
  bool phase_lines_;
  mutable std::mutex mutex_;
  std::string name_;
  std::string unit_;
  std::uint64_t total_ = 0;
  std::uint64_t done_ = 0;
  Clock::time_point started_{};
  Clock::time_point last_printed_{};
  bool printed_progress_ = false;
  bool line_open_ = false;  // a terminal's progress line not yet ended
  std::size_t open_width_ = 0;
};

}  // namespace commbench
