// A test-only fault hook: COMMBENCH_DEBUG_STALL="RANK:TEXT" makes the process whose
// launcher rank is RANK stop itself (SIGSTOP: every thread, as a hung node or a stuck
// driver call would) at the first watchdog-guarded step whose name contains TEXT. The
// fault-injection tests drive every phase of a run with it, from "starting MPI" to
// "finalizing MPI"; since the hook sits in Watchdog::guard(), every phase it can stop is
// one the watchdog covers.
#pragma once

#include <optional>
#include <string>

namespace commbench {

class StallHook {
 public:
  // From COMMBENCH_DEBUG_STALL and the launcher's rank (rank 0 without a launcher). A
  // malformed value is reported once on stderr and ignored: it is a test hook, not a flag.
  static StallHook from_environment();
  StallHook() = default;
  StallHook(int rank, std::string step_text) : target_{Target{rank, std::move(step_text)}} {}

  // Whether this process should stop at `step` (true at most once).
  bool should_stall(int own_rank, const std::string& step);
  // Stops this process if should_stall().
  void at_step(int own_rank, const std::string& step);

 private:
  struct Target {
    int rank;
    std::string step_text;
  };
  std::optional<Target> target_;
  bool fired_ = false;
};

// The rank this process has in its launcher's job (0 when started alone).
int launcher_rank_or_zero();

}  // namespace commbench
