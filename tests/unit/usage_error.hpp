// The message of the UsageError a step throws: tests compare whole messages, since the
// one-line error naming the flag or file is part of the contract.
#pragma once

#include <functional>
#include <string>

#include "commbench/core/error.hpp"

namespace commbench::testing {

// The message, or "(accepted)" when the step throws nothing.
inline std::string usage_error_of(const std::function<void()>& step) {
  try {
    step();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace commbench::testing
