#include "commbench/runner/stall_hook.hpp"

#include <csignal>
#include <cstdio>
#include <cstdlib>

#include "commbench/core/launcher_env.hpp"

namespace commbench {

int launcher_rank_or_zero() {
  return launcher_rank([](const char* name) { return std::getenv(name); }).value_or(0);
}

StallHook StallHook::from_environment() {
  const char* value = std::getenv("COMMBENCH_DEBUG_STALL");
  if (value == nullptr || *value == '\0') return StallHook();
  const std::string text(value);
  const auto colon = text.find(':');
  const std::optional<int> rank =
      colon == std::string::npos ? std::nullopt : parse_non_negative_int(text.substr(0, colon).c_str());
  if (!rank || colon + 1 >= text.size()) {
    std::fprintf(stderr, "commbench: COMMBENCH_DEBUG_STALL='%s' ignored: expected RANK:STEP\n", value);
    return StallHook();
  }
  return StallHook(*rank, text.substr(colon + 1));
}

bool StallHook::should_stall(int own_rank, const std::string& step) {
  if (!target_ || fired_ || own_rank != target_->rank || step.find(target_->step_text) == std::string::npos)
    return false;
  fired_ = true;
  return true;
}

void StallHook::at_step(int own_rank, const std::string& step) {
  if (!should_stall(own_rank, step)) return;
  std::fprintf(stderr, "commbench: rank %d stops itself at '%s' (COMMBENCH_DEBUG_STALL)\n", own_rank, step.c_str());
  std::fflush(stderr);
  std::raise(SIGSTOP);
}

}  // namespace commbench
