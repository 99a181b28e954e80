#include "commbench/runner/stall_hook.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

namespace commbench {
namespace {

TEST(StallHook, StopsOnlyTheNamedRankAtTheFirstMatchingStep) {
  StallHook hook(1, "allocating");
  EXPECT_FALSE(hook.should_stall(0, "allocating the buffers"));  // another rank
  EXPECT_FALSE(hook.should_stall(1, "planning the sweep"));      // another step
  EXPECT_TRUE(hook.should_stall(1, "allocating the buffers"));
  EXPECT_FALSE(hook.should_stall(1, "allocating the buffers"));  // once only
}

TEST(StallHook, ReadsRankAndStepFromTheEnvironment) {
  ::setenv("COMMBENCH_DEBUG_STALL", "0:(timed batch", 1);
  StallHook hook = StallHook::from_environment();
  EXPECT_TRUE(hook.should_stall(0, "allreduce 8B float sum out-of-place (timed batch, 3 iterations)"));
  for (const char* malformed : {"timed batch", "x:step", "1:", ":step", "-1:step"}) {
    ::setenv("COMMBENCH_DEBUG_STALL", malformed, 1);
    testing::internal::CaptureStderr();
    StallHook ignored = StallHook::from_environment();
    EXPECT_NE(testing::internal::GetCapturedStderr().find("ignored: expected RANK:STEP"), std::string::npos)
        << malformed;
    EXPECT_FALSE(ignored.should_stall(0, "step")) << malformed;
    EXPECT_FALSE(ignored.should_stall(1, "step")) << malformed;
  }
  ::unsetenv("COMMBENCH_DEBUG_STALL");
  EXPECT_FALSE(StallHook::from_environment().should_stall(0, "anything"));
}

}  // namespace
}  // namespace commbench
