// What work inside a job needs of the job it runs in: its ranks, its watchdog, whether
// this rank reports, and steps that every rank leaves the same way. The command shell's
// JobSession provides it; measurement and analysis that run inside a job take this
// interface, so they depend on the runner, not on the shell.
#pragma once

#include <functional>
#include <string>

#include "commbench/backend/bootstrap.hpp"
#include "commbench/runner/phase_progress.hpp"
#include "commbench/runner/watchdog.hpp"

namespace commbench {

class JobSteps {
 public:
  virtual ~JobSteps() = default;

  virtual Bootstrap& world() = 0;
  virtual Watchdog& watchdog() = 0;
  // Rank 0 prints and writes the results.
  virtual bool reporting() const = 0;
  // Runs `body` on every rank under the watchdog (named `what` in a timeout) and makes
  // every rank leave it the same way (collective_try): one error message, one exit code.
  virtual void step(const std::string& what, const std::function<void()>& body) = 0;
  // Where the work says which phase of the run begins (a tuning trial, its warm-up).
  virtual PhaseListener& phases() = 0;
};

}  // namespace commbench
